/**
 * One e-mail delivery through the site's SMTP relay (nodemailer, from notify.email.smtp_url:
 * smtp:// upgrades with STARTTLS when the relay offers it, smtps:// is TLS from the start). The
 * delivery id is the Message-ID (and X-Rigd-Delivery): a retry carries the same one.
 */
import { hostname } from 'node:os';
import nodemailer from 'nodemailer';
import type { NotifyConfig } from '../../config/notify.ts';
import { errorLine, oneLine, type Answer } from './answer.ts';
import { emailSubject, emailText, type IncidentEvent } from './message.ts';
import type { SendOptions } from './webhook.ts';

interface SmtpError extends Error {
  responseCode?: number;
  response?: string;
}

export async function sendEmail(email: NotifyConfig['email'], event: IncidentEvent, baseUrl: string, opts: SendOptions): Promise<Answer> {
  const transport = nodemailer.createTransport({
    url: email.smtp_url,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    logger: false,
    debug: false,
  });
  const onAbort = () => transport.close();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const info = await transport.sendMail({
      from: email.from,
      to: email.to,
      subject: emailSubject(event),
      text: emailText(event, baseUrl),
      messageId: `<${opts.delivery}@${hostname() || 'rigd'}>`,
      headers: { 'X-Rigd-Delivery': opts.delivery, 'X-Rigd-Event': event.event },
    });
    const rejected = (info.rejected ?? []).map(String);
    const note = rejected.length ? ` (refused: ${rejected.join(', ')})` : '';
    return { ok: true, permanent: false, text: oneLine(`${info.response ?? '250'}${note}`) };
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const e = err as SmtpError;
    // A 5xx is the relay's final word (auth refused, recipient unknown); a 4xx and no answer may pass later.
    const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
    return { ok: false, permanent, text: e.response ? oneLine(e.response) : errorLine(err) };
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    transport.close();
  }
}
