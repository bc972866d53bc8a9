/**
 * The notify job: one delivery of one incident event to one target. The payload names its target
 * without secrets or addresses (a webhook by the hash of its URL, e-mail by the hash of its
 * recipients: recipientsId); the send reads the target from the config it runs with.
 */
import type { NotifyConfig } from '../../config/notify.ts';
import { backoffMs, type BackoffOptions } from '../../jobs/backoff.ts';
import type { IncidentEvent } from './message.ts';
import { findHook, hookId, recipientsId, type Target } from './targets.ts';

export const NOTIFY_JOB = 'notify';

export type NotifyJob =
  | { target: 'webhook'; hook: string; delivery: string; event: IncidentEvent }
  /** recipients: absent in jobs written before it was recorded. */
  | { target: 'email'; recipients?: string; delivery: string; event: IncidentEvent };

/** Longest wait between two attempts (the job runner's cap). */
const MAX_RETRY_MS = 600_000;

export function notifyBackoff(notify: Readonly<NotifyConfig>): BackoffOptions {
  return { baseMs: Math.round(notify.first_retry_s * 1000), maxMs: MAX_RETRY_MS };
}

/**
 * Attempts enough to keep trying for retry_hours (the handler gives up at that bound; this only
 * keeps the count from ending it first).
 */
export function attemptsFor(notify: Readonly<NotifyConfig>): number {
  const bound = notify.retry_hours * 3_600_000;
  const backoff = { ...notifyBackoff(notify), jitter: 0 };
  let total = 0;
  let n = 1;
  while (total <= bound && n < 100_000) total += backoffMs(n++, backoff);
  return n + 1;
}

export function payloadFor(t: Target, event: IncidentEvent, delivery: string): NotifyJob {
  return t.type === 'webhook' ? { target: 'webhook', hook: hookId(t.hook.url), delivery, event } : { target: 'email', recipients: recipientsId(t.email.to), delivery, event };
}

/** The job's target in the config now, or undefined when it has been removed since. */
export function targetOf(notify: Readonly<NotifyConfig>, job: NotifyJob): Target | undefined {
  if (job.target === 'webhook') {
    return findHook(notify, job.hook);
  }
  return notify.email.smtp_url !== '' ? { type: 'email', email: notify.email } : undefined;
}
