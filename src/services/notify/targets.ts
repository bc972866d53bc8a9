/**
 * The configured receivers of notifications (notify.webhooks, notify.email), which of them take an
 * incident kind, and how each is named in logs and output without its secrets.
 */
import { createHash } from 'node:crypto';
import type { NotifyConfig, WebhookTarget } from '../../config/notify.ts';

/** index: the webhook's place in notify.webhooks (from 0), as RIGD_NOTIFY_WEBHOOKS_<N>_* count. */
export type Target = { type: 'webhook'; hook: WebhookTarget; index: number } | { type: 'email'; email: NotifyConfig['email'] };

/** Whether an `events` list takes this incident kind ("*": every kind). */
export function takes(events: readonly string[], kind: string): boolean {
  return events.includes('*') || events.includes(kind);
}

/** Every configured target (webhook: a URL; e-mail: an SMTP URL), of one type when asked. */
export function configuredTargets(notify: Readonly<NotifyConfig>, only?: Target['type']): Target[] {
  const out: Target[] = [];
  if (only !== 'email') notify.webhooks.forEach((hook, index) => out.push({ type: 'webhook', hook, index }));
  if (only !== 'webhook' && notify.email.smtp_url !== '') out.push({ type: 'email', email: notify.email });
  return out;
}

/** The targets an incident of this kind goes to. */
export function targetsFor(notify: Readonly<NotifyConfig>, kind: string): Target[] {
  return configuredTargets(notify).filter((t) => takes(t.type === 'webhook' ? t.hook.events : t.email.events, kind));
}

/**
 * A webhook's stable name in the jobs table: a hash of its URL, never the URL (a Slack URL is a
 * secret). The job finds its webhook again by it; a URL no longer configured is not sent to.
 */
export function hookId(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 16);
}

/**
 * The e-mail target's recipients as the jobs table names them: a hash of the sorted, lower-cased
 * addresses, never the addresses. A delivery to other recipients (notify.email.to changed) is
 * another target.
 */
export function recipientsId(to: readonly string[]): string {
  const list = [...new Set(to.map((a) => a.trim().toLowerCase()))].sort();
  return createHash('sha256').update(list.join('\n')).digest('hex').slice(0, 16);
}

export function findHook(notify: Readonly<NotifyConfig>, id: string): Target | undefined {
  const index = notify.webhooks.findIndex((h) => hookId(h.url) === id);
  return index < 0 ? undefined : { type: 'webhook', hook: notify.webhooks[index], index };
}

/**
 * A target as logs and `rigd notify test` show it: scheme, host and port only (a webhook's path
 * and query may carry a token; an SMTP URL's user info carries the relay password).
 */
export function targetLabel(t: Target): string {
  if (t.type === 'webhook') {
    const u = new URL(t.hook.url);
    const rest = u.pathname !== '/' || u.search ? '/…' : '';
    return `webhook ${t.index} ${u.origin}${rest}`;
  }
  const u = new URL(t.email.smtp_url);
  return `email ${u.protocol}//${u.host} to ${t.email.to.join(', ')}`;
}
