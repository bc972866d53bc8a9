// test: alone (rigs reporting every few seconds; alert timing)
// Incidents reach people, end to end: 10 rigs report every 2 s from VPN addresses (a network
// namespace), a real webhook receiver (signatures checked) and a real SMTP relay listen. One rig
// going dark is one message within 4 of its intervals and one recovery after its next report;
// 8 of 10 going dark at once is one outage message; a receiver down for a while loses nothing and
// gets nothing twice. Both engines.
import test from 'tape';
import type { WebhookBody } from '../../../src/services/notify/message.ts';
import { signatureValid, startHttpSink, startSmtpSink, type HttpSink, type Received, type SmtpSink } from '../notify/sinks.ts';
import { startFleet, until, type Fleet } from './fleet.ts';

const SECRET = 'whsec-e2e-8f14e45fceea167a5a36dedd4bea2543';
const IDS = Array.from({ length: 10 }, (_, i) => `rig${i + 1}`);
// Every 2 s: offline after 3 intervals (6 s), seen by a sweep each second (7 s); the bound adds 5 s
// for a busy machine, still far from the fixed rigs.online_after_s (300 s) of a rig without a rhythm.
const EVERY_MS = 2000;
const OPENED_WITHIN_MS = 3 * EVERY_MS + 1000 + 5000;

let f: Fleet;
let hook: HttpSink;
let smtp: SmtpSink;

const bodies = (): WebhookBody[] => hook.received.map((r: Received) => JSON.parse(r.body.toString('utf8')) as WebhookBody);
const messages = (kind: string, event: string, rig?: string) =>
  bodies().filter((b) => b.incident.kind === kind && b.event === event && (rig === undefined || b.rig?.id === rig || (b.rigs ?? []).includes(rig)));

async function rhythms(): Promise<number> {
  const rows = await f.app.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM rigs WHERE report_intervals >= 4');
  return Number(rows[0]?.n ?? 0);
}

test('setup: a webhook receiver, an SMTP relay, 10 rigs reporting every 2 s until each has a rhythm', async (t) => {
  hook = await startHttpSink();
  smtp = await startSmtpSink();
  f = await startFleet(43, IDS.map((id) => ({ id, everyMs: EVERY_MS })), {
    alerts: { min_silence_s: 1, check_interval_s: 1, outage_share: 0.5 },
    notify: {
      webhooks: [{ url: hook.url('/hooks/rigd'), secret: SECRET, events: ['*'] }],
      email: { smtp_url: `smtp://rigd:relay-pw@127.0.0.1:${smtp.port}`, from: 'rigd@gw.example', to: ['oncall@example.com'], events: ['*'] },
      first_retry_s: 0.2,
      retry_hours: 1,
    },
  });
  await until('a rhythm for all 10', async () => (await rhythms()) === IDS.length);
  t.equal(hook.received.length, 0, 'no message while every rig reports');
});

test('one rig goes dark: one message after 3 of its intervals and the next check, saying which rig, since when and where; one recovery after its next report', async (t) => {
  f.stop('rig10');
  const [opened] = await until('the offline message', () => (messages('rig_offline', 'opened', 'rig10').length > 0 ? messages('rig_offline', 'opened', 'rig10') : null));
  const silent = Date.parse(opened!.incident.opened_at) - Date.parse(opened!.rig!.last_seen!);
  t.ok(silent <= OPENED_WITHIN_MS, `opened ${silent} ms after its last report (its interval: ${EVERY_MS} ms; bound ${OPENED_WITHIN_MS} ms)`);
  t.match(opened!.text, /rig10/, `the text names the rig: ${opened!.text}`);
  t.match(opened!.text, /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/, 'and since when, in UTC');
  t.deepEqual([opened!.rig!.latitude, opened!.rig!.longitude], [52.52, 13.405], 'and where it was last');
  f.start('rig10');
  const [resolved] = await until('the recovery message', () => (messages('rig_offline', 'resolved', 'rig10').length > 0 ? messages('rig_offline', 'resolved', 'rig10') : null));
  t.equal(resolved!.incident.id, opened!.incident.id, 'the recovery names the same incident');
  t.ok(resolved!.incident.resolved_at, 'with its end');
});

test('8 of 10 rigs go dark at once: one outage message, not 8; one when they are back', async (t) => {
  const silent = IDS.slice(0, 8);
  f.stop(...silent);
  const [outage] = await until('the outage message', () => (messages('fleet_outage', 'opened').length > 0 ? messages('fleet_outage', 'opened') : null));
  t.deepEqual([...(outage!.rigs ?? [])].sort(), [...silent].sort(), 'it lists the 8 silent rigs');
  // More sweeps while they stay silent: still one message.
  for (let i = 0; i < 3; i++) await f.app.alerts.sweep();
  await f.startTogether(...silent);
  await until('the outage resolved', () => messages('fleet_outage', 'resolved').length > 0 || null);
  t.equal(messages('fleet_outage', 'opened').length, 1, 'one outage message');
  t.equal(silent.filter((id) => messages('rig_offline', 'opened', id).length > 0).length, 0, 'no rig_offline message for any of the 8');
});

test('the receiver down for a while: the message waits in the queue and arrives once it is back', async (t) => {
  await hook.down();
  const before = hook.received.length;
  f.stop('rig9');
  await until('rig9 offline in the incidents table', async () => {
    const rows = await f.app.db.reader.all<{ n: number }>("SELECT COUNT(*) AS n FROM incidents WHERE kind = 'rig_offline' AND subject = 'rig9' AND resolved_at IS NULL");
    return Number(rows[0]?.n ?? 0) === 1 || null;
  });
  // A few retries fail against the closed port.
  await until('delivery attempts against the closed port', async () => {
    const rows = await f.app.db.reader.all<{ n: number }>("SELECT MAX(attempts) AS n FROM jobs WHERE kind = 'notify' AND state = 'queued'");
    return Number(rows[0]?.n ?? 0) >= 2 || null;
  });
  t.equal(hook.received.length, before, 'nothing arrives while the receiver is down');
  await hook.up();
  await until('the offline message after the receiver is back', () => messages('rig_offline', 'opened', 'rig9').length > 0 || null);
  f.start('rig9');
  await until('rig9 back', () => messages('rig_offline', 'resolved', 'rig9').length > 0 || null);
  t.equal(messages('rig_offline', 'opened', 'rig9').length, 1, 'the offline message arrived once');
});

test('every message: signed, sent once, and the same ones by e-mail', async (t) => {
  await until('every notify job settled', async () => {
    const rows = await f.app.db.reader.all<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'notify' AND state IN ('queued', 'running')");
    return Number(rows[0]?.n ?? 1) === 0 || null;
  });
  t.ok(hook.received.length >= 6, `${hook.received.length} messages`);
  t.ok(hook.received.every((r) => signatureValid(r, SECRET)), 'each X-Rigd-Signature verifies against the body');
  const deliveries = hook.received.map((r) => String(r.headers['x-rigd-delivery']));
  t.equal(new Set(deliveries).size, deliveries.length, 'no delivery id twice');
  const transitions = bodies().map((b) => `${b.incident.id}:${b.event}`);
  t.equal(new Set(transitions).size, transitions.length, 'no incident transition twice');
  t.ok(bodies().every((b) => typeof b.text === 'string' && b.text.length > 0), 'each has a Slack-compatible text');
  await until('the same number of e-mails', () => smtp.mails.length >= hook.received.length || null, 60_000);
  t.equal(smtp.mails.length, hook.received.length, `${smtp.mails.length} e-mails, one per message`);
});

test('teardown', async () => {
  await f.close();
  await hook.close();
  await smtp.close();
});
