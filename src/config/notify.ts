/**
 * The notify section: where incidents are sent (src/services/notify). Webhook secrets and the SMTP
 * URL (it may carry the relay's password) can come from the environment file like every other
 * secret: RIGD_NOTIFY_EMAIL_SMTP_URL as any key, and the N-th webhook (from 0) by
 * RIGD_NOTIFY_WEBHOOKS_<N>_URL / RIGD_NOTIFY_WEBHOOKS_<N>_SECRET (see webhookEnvOverrides).
 */
import Joi from 'joi';
import { KeyedProblem, Problem } from './rules.ts';

/** One webhook target of notify.webhooks. */
export interface WebhookTarget {
  url: string;
  /** HMAC-SHA256 key of X-Rigd-Signature; empty: no signature header. */
  secret: string;
  /** Incident kinds sent to it; "*" is every kind. */
  events: string[];
}

export interface NotifyConfig {
  webhooks: WebhookTarget[];
  email: {
    /** smtp://user:pass@relay:25 or smtps://...; empty: no e-mail. */
    smtp_url: string;
    from: string;
    to: string[];
    /** Incident kinds sent by e-mail; "*" is every kind. */
    events: string[];
  };
  /** A notification not delivered this many hours after its incident transition is given up. */
  retry_hours: number;
  /** Seconds before the first retry; each next wait doubles, up to 10 minutes. */
  first_retry_s: number;
  /** Seconds one delivery attempt may take (connect and answer). */
  timeout_s: number;
}

/** An http(s) URL with a host; a path and a query are allowed (relays often take a token there), user info is not. */
function webhookUrl(): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Problem('is not a URL (expected an http(s) URL like https://hooks.example/rigd)');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Problem(`has scheme ${url.protocol.slice(0, -1)}, not http or https`);
    if (!url.hostname) throw new Problem('has no host');
    if (url.username || url.password) throw new Problem('carries a user name or password (put a shared secret in secret instead)');
    if (url.hash) throw new Problem('has a fragment');
    return value;
  }, 'webhook URL');
}

/** smtp:// or smtps:// with a host; user and password (percent-encoded) optional. */
function smtpUrl(): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Problem('is not a URL (expected like smtp://user:pass@relay.example:25 or smtps://relay.example)');
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Problem(`has scheme ${url.protocol.slice(0, -1)}, not smtp or smtps`);
    if (!url.hostname) throw new Problem('has no host');
    return value;
  }, 'SMTP URL');
}

const events = Joi.array()
  .items(Joi.string().pattern(/^(\*|[a-z][a-z0-9_]*)$/, 'incident kind (like rig_offline, or *)'))
  .single()
  .default(['*']);

export const notifySchema = Joi.object<NotifyConfig>({
  webhooks: Joi.array()
    .items(
      Joi.alternatives().try(
        Joi.object({
          url: webhookUrl().required(),
          secret: Joi.string().allow('').max(1024).default(''),
          events,
        }),
        // A bare URL (RIGD_NOTIFY_WEBHOOKS=url,url): every kind, no secret.
        webhookUrl().custom((url: string) => ({ url, secret: '', events: ['*'] })),
      ),
    )
    .default([]),
  email: Joi.object({
    smtp_url: smtpUrl().allow('').default(''),
    from: Joi.string().allow('').max(320).default(''),
    to: Joi.array().items(Joi.string().email({ tlds: false })).single().default([]),
    events,
  }).default(),
  retry_hours: Joi.number().greater(0).max(720).default(24),
  first_retry_s: Joi.number().greater(0).max(3600).default(30),
  timeout_s: Joi.number().greater(0).max(300).default(10),
})
  .default()
  .custom((value: NotifyConfig) => {
    const { email } = value;
    if (email.smtp_url !== '' && email.to.length === 0) throw new KeyedProblem('notify.email.to', email.to, 'is empty while notify.email.smtp_url is set (expected at least one address)');
    if (email.smtp_url !== '' && email.from === '') throw new KeyedProblem('notify.email.from', email.from, 'is empty while notify.email.smtp_url is set (expected a sender like rigd@gateway.example)');
    return value;
  });

const WEBHOOK_ENV = /^RIGD_NOTIFY_WEBHOOKS_(\d{1,3})_(URL|SECRET)$/;

/**
 * The webhooks list with RIGD_NOTIFY_WEBHOOKS_<N>_URL / _SECRET applied to its N-th entry (a URL
 * alone adds an entry), and the variables used, by key path: a secret stays out of the YAML.
 */
export function webhookEnvOverrides(fileValue: unknown, env: NodeJS.ProcessEnv): { webhooks: unknown; used: Map<string, string> } | null {
  const used = new Map<string, string>();
  const list: unknown[] = Array.isArray(fileValue) ? fileValue.map((w) => (typeof w === 'string' ? { url: w } : w && typeof w === 'object' ? { ...w } : w)) : [];
  // URLs first: a secret may belong to an entry that only a URL variable adds.
  const names = Object.keys(env).sort((a, b) => Number(b.endsWith('_URL')) - Number(a.endsWith('_URL')));
  for (const name of names) {
    const value = env[name];
    const m = WEBHOOK_ENV.exec(name);
    if (!m || value === undefined) continue;
    const i = Number(m[1]);
    const key = m[2].toLowerCase();
    const entry = list[i];
    if (entry === undefined || entry === null || typeof entry !== 'object') {
      if (key !== 'url') continue; // a secret for no webhook: nothing to apply it to
      list[i] = {};
    }
    (list[i] as Record<string, unknown>)[key] = value;
    // Error lines name a key without its index (config: notify.webhooks[0].secret ... (from NAME)).
    used.set(`notify.webhooks.${key}`, name);
  }
  if (used.size === 0) return null;
  return { webhooks: Array.from(list, (w) => w ?? {}), used };
}
