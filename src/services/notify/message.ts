/**
 * What a notification says: the incident event as the alerts service hands it over (one type on
 * both sides), the JSON body of a webhook, and the subject and plain text of an e-mail.
 */

import type { IncidentEvent } from '../alerts/event.ts';

export type { IncidentEvent };

/** The webhook body: Slack's incoming webhooks read `text` and ignore the rest. */
export interface WebhookBody {
  event: IncidentEvent['event'];
  incident: { id: number; kind: string; opened_at: string; resolved_at: string | null };
  rig: IncidentEvent['rig'];
  rigs?: string[];
  text: string;
}

export function webhookBody(e: IncidentEvent): WebhookBody {
  const { id, kind, opened_at, resolved_at } = e.incident;
  return { event: e.event, incident: { id, kind, opened_at, resolved_at }, rig: e.rig, ...(e.rigs ? { rigs: e.rigs } : {}), text: e.text };
}

/** Rig-reported text in a mail: control characters (a forged header line, terminal escapes) become spaces. */
function plain(text: string, keepNewlines = false): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(keepNewlines ? /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g : /[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

const WORDS: Record<IncidentEvent['event'], string> = { opened: 'opened', repeated: 'still open', resolved: 'resolved' };

/** Most rig ids listed in a mail (the rest counted). */
const MAX_LISTED_RIGS = 50;

/** The kinds whose subject is a source address. */
const FROM_ADDRESS = new Set(['rig_refused', 'key_refused']);

export function emailSubject(e: IncidentEvent): string {
  const rig = e.rig ? ` rig ${e.rig.id}` : e.rigs?.length ? ` (${e.rigs.length} rigs)` : '';
  // An identity refusal is about the address it came from (its subject), with the rig id when it used one.
  const who = FROM_ADDRESS.has(e.incident.kind) && e.incident.subject ? ` from ${e.incident.subject}${rig}` : rig;
  return plain(`[rigd] ${e.incident.kind}${who}: ${WORDS[e.event]}`).slice(0, 200);
}

/** The plain-text body: the event's text, then which rig, since when, where it was last, and a link. */
export function emailText(e: IncidentEvent, baseUrl: string): string {
  const lines = [plain(e.text, true), ''];
  const i = e.incident;
  lines.push(`Incident: #${i.id} ${i.kind}${i.subject ? ` (${i.subject})` : ''}, ${WORDS[e.event]}`);
  lines.push(`Since: ${i.opened_at}`);
  if (i.resolved_at) lines.push(`Resolved: ${i.resolved_at}`);
  if (e.rig) {
    const r = e.rig;
    lines.push(`Rig: ${r.id}${r.version ? ` version ${r.version}` : ''}${r.branch ? ` (${r.branch})` : ''}`);
    lines.push(`Last report: ${r.last_seen ?? 'never'}`);
    const where = r.latitude !== null && r.longitude !== null ? `${r.latitude}, ${r.longitude}${r.last_fix_at ? ` (fix at ${r.last_fix_at})` : ''}` : 'no position reported';
    lines.push(`Last position: ${where}`);
    lines.push(`More: ${baseUrl.replace(/\/+$/, '')}/rigs/${encodeURIComponent(r.id)}`);
  }
  if (e.rigs?.length) {
    const shown = e.rigs.slice(0, MAX_LISTED_RIGS);
    const more = e.rigs.length - shown.length;
    lines.push(`Rigs (${e.rigs.length}): ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  return `${plain(lines.join('\n'), true)}\n`;
}

/** The message `rigd notify test` sends: incident kind "test", id 0, no rig. */
export function testEvent(host: string, now: Date = new Date()): IncidentEvent {
  const at = now.toISOString();
  return {
    event: 'opened',
    incident: { id: 0, kind: 'test', subject: null, opened_at: at, resolved_at: null },
    rig: null,
    text: `rigd test notification from ${host} at ${at}: if you read this, notifications reach you.`,
  };
}
