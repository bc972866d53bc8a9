/** One delivery attempt to any target: the queue's handler and `rigd notify test` both send through it. */
import type { Answer } from './answer.ts';
import { sendEmail } from './email.ts';
import type { IncidentEvent } from './message.ts';
import type { Target } from './targets.ts';
import { sendWebhook, type SendOptions } from './webhook.ts';

export function send(target: Target, event: IncidentEvent, baseUrl: string, opts: SendOptions): Promise<Answer> {
  return target.type === 'webhook' ? sendWebhook(target.hook, event, opts) : sendEmail(target.email, event, baseUrl, opts);
}
