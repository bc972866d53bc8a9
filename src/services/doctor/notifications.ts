/**
 * The `notifications` check of `rigd doctor`: notifications given up in the last 24 h (refused for
 * good by their receiver, their target removed, or not delivered within notify.retry_hours): for
 * each of them nobody was told of an incident. A warn with their count and the newest one's
 * incident and target, named as logs name it (scheme, host and port: no token, no password).
 * Those whose target (the same webhook URL, or e-mail to the same recipients) has delivered a
 * notification since do not warn: the target was fixed.
 */
import type { Config } from '../../config/schema.ts';
import { givenUpNotifications, type GivenUp } from '../../db/diagnostics/notify.ts';
import { databaseSite } from '../../db/site.ts';
import type { NotifyJob } from '../notify/job.ts';
import { configuredTargets, findHook, recipientsId, targetLabel } from '../notify/targets.ts';
import { oneLine } from '../notify/answer.ts';
import { timeAgo } from '../time-ago.ts';
import { errorText, ok, warn, type Finding } from './finding.ts';

const CHECK = 'notifications';
/** Given-up notifications older than this are not reported. */
const WINDOW_MS = 86_400_000;

export async function checkNotifications(config: Readonly<Config>): Promise<Finding> {
  const webhooks = configuredTargets(config.notify, 'webhook').length;
  const email = configuredTargets(config.notify, 'email').length > 0;
  const targets = `${webhooks} webhook${webhooks === 1 ? '' : 's'}, ${email ? 'e-mail' : 'no e-mail'}`;
  let found: GivenUp | null;
  try {
    found = await givenUpNotifications(databaseSite(config.data_dir, config.database.url), WINDOW_MS);
  } catch (err) {
    return warn(CHECK, `the notifications given up cannot be read: ${errorText(err)}`, 'see the database line above');
  }
  if (!found || (found.count === 0 && found.recovered === 0)) return ok(CHECK, `none given up in the last 24 h (${targets})`);
  if (found.count === 0) {
    const n = found.recovered;
    return ok(CHECK, `${n} given up in the last 24 h, ${n === 1 ? 'its target has' : 'their targets have'} delivered since (${targets})`);
  }
  const newest = found.newest ? `, newest: ${describe(config, found.newest)}` : '';
  return warn(
    CHECK,
    `${found.count} notification${found.count === 1 ? '' : 's'} given up in the last 24 h${newest}`,
    "nobody was told: see the incidents with rigd alerts, why with journalctl -u rigd | grep 'notification' (lines \"notification given up\" or \"refused\"); try the target with rigd notify test",
  );
}

function describe(config: Readonly<Config>, n: NonNullable<GivenUp['newest']>): string {
  let job: NotifyJob;
  try {
    job = JSON.parse(n.payload) as NotifyJob;
  } catch {
    return 'a notification whose record cannot be read';
  }
  const { incident } = job.event;
  const subject = incident.subject ? ` ${incident.subject}` : '';
  const now = new Date();
  const ago = timeAgo(new Date(now.getTime() - n.ageS * 1000), now, { short: true });
  const why = n.lastError ? `: ${oneLine(n.lastError)}` : '';
  return `incident ${incident.id} (${incident.kind}${subject}, ${job.event.event}) to ${targetText(config, job)}, ${ago}${why}`;
}

/** The job's target as the config names it now; a webhook no longer configured has only its hash. */
function targetText(config: Readonly<Config>, job: NotifyJob): string {
  if (job.target === 'email') {
    const email = config.notify.email;
    if (!email.smtp_url) return 'e-mail (no longer configured)';
    const label = targetLabel({ type: 'email', email });
    // Given up to recipients notify.email.to no longer lists: the current ones were not its target.
    return job.recipients === undefined || job.recipients === recipientsId(email.to) ? label : `${label.replace(/ to .*$/, '')} to recipients no longer configured`;
  }
  const hook = findHook(config.notify, job.hook);
  return hook ? targetLabel(hook) : `a webhook no longer configured (id ${job.hook})`;
}
