/**
 * The notify job's handler: sends, and tells the runner what came of it. Taken: done. A final
 * refusal (400/401/403/404/410, an SMTP 5xx) or a target no longer configured: failed for good,
 * with a warn line. Anything else (receiver down, slow, 5xx): retried with backoff until
 * notify.retry_hours after the job was queued, then given up with a warn line.
 */
import type { Config } from '../../config/schema.ts';
import { backoffMs } from '../../jobs/backoff.ts';
import { JobError, PermanentJobError } from '../../jobs/errors.ts';
import type { JobHandler, RunnerLogger } from '../../jobs/runner.ts';
import { notifyBackoff, targetOf, type NotifyJob } from './job.ts';
import { send } from './send.ts';
import { targetLabel } from './targets.ts';

export function deliveryHandler(config: Readonly<Config>, log: RunnerLogger): JobHandler<NotifyJob> {
  const { notify } = config;
  const timeoutMs = Math.round(notify.timeout_s * 1000);
  return async (job, ctx) => {
    const p = job.payload;
    const about = { delivery: p.delivery, incident: p.event.incident.id, kind: p.event.incident.kind, event: p.event.event, attempt: job.attempts };
    const target = targetOf(notify, p);
    if (!target) {
      log.warn('notification not sent: its target is no longer configured', { ...about, target: p.target });
      throw new PermanentJobError(`the ${p.target} target of this notification is no longer configured`, 'target_gone');
    }
    const answer = await send(target, p.event, config.server.base_url, { delivery: p.delivery, timeoutMs, signal: ctx.signal });
    const fields = { ...about, target: targetLabel(target), answer: answer.text };
    if (answer.ok) {
      log.info('notification sent', fields);
      return;
    }
    if (answer.permanent) {
      log.warn('notification refused by its receiver: not retried', fields);
      throw new PermanentJobError(`refused: ${answer.text}`, 'refused');
    }
    const deadline = job.createdAt.getTime() + notify.retry_hours * 3_600_000;
    if (Date.now() + backoffMs(job.attempts, { ...notifyBackoff(notify), jitter: 0 }) > deadline) {
      log.warn('notification given up: not delivered within notify.retry_hours', { ...fields, retry_hours: notify.retry_hours });
      throw new PermanentJobError(`given up after ${notify.retry_hours} h: ${answer.text}`, 'gave_up');
    }
    log.info('notification not delivered yet: retrying', fields);
    throw new JobError(`not delivered: ${answer.text}`, 'not_delivered');
  };
}
