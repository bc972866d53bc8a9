// What a notification says, from an incident event: the webhook body's exact fields, the mail's
// subject and text, and rig-reported text that cannot forge a header line.
import test from 'tape';
import { emailSubject, emailText, webhookBody } from '../../../src/services/notify/message.ts';
import { offlineEvent, outageEvent } from './events.ts';

test('webhook body: event, incident {id, kind, opened_at, resolved_at}, rig, rigs when given, text', (t) => {
  const e = offlineEvent(3);
  t.deepEqual(Object.keys(webhookBody(e)), ['event', 'incident', 'rig', 'text'], 'no rigs key for one rig');
  t.deepEqual(Object.keys(webhookBody(e).incident), ['id', 'kind', 'opened_at', 'resolved_at'], 'the incident\'s fields');
  const o = webhookBody(outageEvent(4, ['a', 'b']));
  t.deepEqual(o.rigs, ['a', 'b'], 'a fleet outage lists its rigs');
  t.equal(o.rig, null, 'and no one rig');
  t.end();
});

test('e-mail: subject and text say which rig, since when, where it was last', (t) => {
  const e = offlineEvent(5, 'rig-5');
  t.equal(emailSubject(e), '[rigd] rig_offline rig rig-5: opened', 'subject');
  const text = emailText(e, 'http://gw.example:3000/');
  t.match(text, /^Rig rig-5 is offline/, 'the event text first');
  t.match(text, /Since: 2026-11-26T09:00:00.000Z/, 'since when');
  t.match(text, /Last position: 47.3769, 8.5417 \(fix at 2026-11-26T08:54:30.000Z\)/, 'where it was last');
  t.match(text, /More: http:\/\/gw.example:3000\/rigs\/rig-5\n/, 'a link to its page');
  const resolved = { ...e, event: 'resolved' as const, incident: { ...e.incident, resolved_at: '2026-11-26T10:00:00.000Z' } };
  t.equal(emailSubject(resolved), '[rigd] rig_offline rig rig-5: resolved', 'resolved subject');
  t.match(emailText(resolved, 'http://x'), /Resolved: 2026-11-26T10:00:00.000Z/, 'resolved time');
  const many = outageEvent(6, Array.from({ length: 60 }, (_, i) => `r${i}`));
  t.equal(emailSubject(many), '[rigd] fleet_outage (60 rigs): opened', 'an outage counts its rigs');
  t.match(emailText(many, 'http://x'), /Rigs \(60\): r0, .* r49 and 10 more/, 'and lists the first 50');
  t.end();
});

test('e-mail: an identity refusal says the address it came from, and the rig id when it used one', (t) => {
  const base = { event: 'opened' as const, rig: null, text: 'reports from 10.144.207.9 refused: …' };
  const incident = { id: 8, kind: 'rig_refused', subject: '10.144.207.9', opened_at: '2026-11-26T09:00:00.000Z', resolved_at: null };
  t.equal(emailSubject({ ...base, incident }), '[rigd] rig_refused from 10.144.207.9: opened', 'many ids: the address');
  const clone = { ...base, incident: { ...incident, kind: 'key_refused' }, rig: offlineEvent(1, 'rig-7').rig };
  t.equal(emailSubject(clone), '[rigd] key_refused from 10.144.207.9 rig rig-7: opened', 'one id: the address and the rig');
  t.equal(emailSubject({ ...base, incident: { ...incident, kind: 'disk_low', subject: 'gw-1' } }), '[rigd] disk_low: opened', 'other kinds as before');
  t.end();
});

test('rig-reported control characters cannot forge a header or escape the terminal', (t) => {
  const e = offlineEvent(7, 'evil\r\nBcc: everyone@example.com\u001b[2J');
  const subject = emailSubject(e);
  t.notOk(/[\r\n\u001b]/.test(subject), 'no CR, LF or ESC in the subject');
  t.match(subject, /evil  Bcc: everyone@example.com \[2J/, 'the text kept, on one line');
  const text = emailText({ ...e, rig: { ...e.rig!, version: 'v1\u0007\u001b]0;x' } }, 'http://x');
  t.notOk(/[\r\u0007\u001b]/.test(text), 'no CR, BEL or ESC in the body');
  t.match(text, /More: http:\/\/x\/rigs\/evil%0D%0ABcc/, 'the link encodes the id');
  t.end();
});
