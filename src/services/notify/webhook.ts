/**
 * One webhook delivery: POST of the JSON body, signed with the target's secret (X-Rigd-Signature:
 * sha256=<hex HMAC-SHA256 of the exact body bytes>), the transition in X-Rigd-Event and the delivery
 * id in X-Rigd-Delivery (the same on every retry: the receiver's idempotency key). Loopback and
 * LAN targets are allowed: a local relay on the gateway is the usual case.
 */
import { createHmac } from 'node:crypto';
import { request } from 'undici';
import type { WebhookTarget } from '../../config/notify.ts';
import { rigdVersion } from '../../version.ts';
import { errorLine, oneLine, type Answer } from './answer.ts';
import { webhookBody, type IncidentEvent } from './message.ts';

/** Statuses that no retry will turn into a success. */
const FINAL_REFUSALS = new Set([400, 401, 403, 404, 410]);
/** Most bytes of a receiver's answer read (for its first line); the rest is dropped. */
const MAX_ANSWER_BYTES = 8192;

export function signature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

async function firstBytes(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    n += chunk.length;
    if (n >= MAX_ANSWER_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
}

export interface SendOptions {
  delivery: string;
  timeoutMs: number;
  /** Aborts the attempt (the job's signal: shutdown, lease lost). */
  signal?: AbortSignal;
}

export async function sendWebhook(hook: WebhookTarget, event: IncidentEvent, opts: SendOptions): Promise<Answer> {
  const body = Buffer.from(JSON.stringify(webhookBody(event)));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `rigd/${rigdVersion()}`,
    'x-rigd-event': event.event,
    'x-rigd-delivery': opts.delivery,
  };
  if (hook.secret !== '') headers['x-rigd-signature'] = signature(hook.secret, body);
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    const res = await request(hook.url, { method: 'POST', headers, body, signal, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs });
    const text = await firstBytes(res.body).catch(() => '');
    const line = oneLine(text);
    const answer = `${res.statusCode}${line ? ` ${line}` : ''}`;
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return { ok, permanent: !ok && FINAL_REFUSALS.has(res.statusCode), text: answer };
  } catch (err) {
    if (timeout.aborted && !opts.signal?.aborted) return { ok: false, permanent: false, text: `no answer within ${opts.timeoutMs / 1000} s` };
    if (opts.signal?.aborted) throw opts.signal.reason;
    return { ok: false, permanent: false, text: errorLine(err) };
  }
}
