// Notifications through rigd's queue in this process: a NotifyWorker on a real database (SQLite or
// PostgreSQL), a real HTTP receiver and a real SMTP relay (smtp-server) on loopback.
import test from 'tape';
import { openDatabase, type Database } from '../../../src/db/index.ts';
import { createLogger } from '../../../src/log.ts';
import { Notifier } from '../../../src/services/notify/notifier.ts';
import { NotifyWorker } from '../../../src/services/notify/worker.ts';
import { testDb } from '../../helpers/dialect.ts';
import { waitFor } from '../../helpers/jobs.ts';
import { testConfig } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { notifyJobs, offlineEvent, outageEvent, payloadOf } from './events.ts';
import { signatureValid, startHttpSink, startSmtpSink } from './sinks.ts';

const SECRET = 'whsec-0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const PATH_TOKEN = 'T0KEN-in-the-path-5d41402abc4b2a76';
const SMTP_PASSWORD = 'relay-pass-9c1185a5c5e9fc54';

interface Setup {
  db: Database;
  worker: NotifyWorker;
  notifier: Notifier;
  logs: string[];
  close(): Promise<void>;
}

async function setup(notify: Record<string, unknown>): Promise<Setup> {
  const dataDir = tmpDir('rigd-notify-');
  const config = testConfig({ data_dir: dataDir, notify } as Parameters<typeof testConfig>[0]);
  const db = await openDatabase(dataDir, testDb(dataDir));
  const logs: string[] = [];
  const log = createLogger('debug', (line) => logs.push(line));
  const worker = new NotifyWorker(db, config, log, { pollMs: 50 });
  await worker.start();
  return {
    db,
    worker,
    notifier: new Notifier(config.notify),
    logs,
    async close() {
      await worker.stop();
      await db.close();
    },
  };
}

function settled(db: Database, n: number) {
  return waitFor(async () => {
    const rows = await notifyJobs(db);
    return rows.length === n && rows.every((r) => r.state === 'done' || r.state === 'failed') ? rows : null;
  }, 60_000, `${n} notify jobs to settle`, 50);
}

test('enqueue: one job per target that takes the kind, committed or rolled back with the caller\'s transaction', async (t) => {
  const http = await startHttpSink();
  const s = await setup({
    webhooks: [
      { url: http.url('/all'), secret: SECRET },
      { url: http.url('/offline-only'), events: ['rig_offline'] },
      { url: http.url('/none'), events: [] },
    ],
  });
  try {
    await s.worker.stop();
    const rolledBack = await s.db.writes
      .run(async (tx) => {
        const n = await s.notifier.enqueue(offlineEvent(1), tx);
        t.equal(n, 2, 'rig_offline: two targets take it ("*" and rig_offline; [] takes none)');
        throw new Error('the transition failed');
      })
      .catch((err: Error) => err.message);
    t.equal(rolledBack, 'the transition failed', 'the transition rolled back');
    t.equal((await notifyJobs(s.db)).length, 0, 'and its notifications with it');
    const n = await s.db.writes.run((tx) => s.notifier.enqueue(outageEvent(2, ['a', 'b']), tx));
    t.equal(n, 1, 'fleet_outage: only the "*" target');
    const rows = await notifyJobs(s.db);
    t.equal(rows.length, 1, 'one job committed');
    t.equal(rows[0].state, 'queued', 'queued');
  } finally {
    await s.close();
    await http.close();
  }
});

test('webhook: signed JSON with the event, delivery id and Slack text; e-mail through the relay with login', async (t) => {
  const http = await startHttpSink();
  const smtp = await startSmtpSink();
  const s = await setup({
    webhooks: [{ url: http.url(`/hooks/${PATH_TOKEN}`), secret: SECRET }],
    email: { smtp_url: `smtp://rigd:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`, from: 'rigd@gw.example', to: ['ops@example.com', 'night@example.com'] },
    first_retry_s: 0.2,
  });
  try {
    const event = offlineEvent(7, 'rig-7');
    const n = await s.db.writes.run((tx) => s.notifier.enqueue(event, tx));
    t.equal(n, 2, 'a webhook job and an e-mail job');
    const rows = await settled(s.db, 2);
    t.deepEqual(rows.map((r) => r.state), ['done', 'done'], 'both done');

    t.equal(http.received.length, 1, 'the webhook got one request');
    const r = http.received[0];
    t.equal(r.path, `/hooks/${PATH_TOKEN}`, 'at its URL');
    t.equal(r.headers['content-type'], 'application/json', 'Content-Type: application/json');
    t.ok(signatureValid(r, SECRET), 'X-Rigd-Signature is the HMAC-SHA256 of the exact body bytes with the secret');
    t.notOk(signatureValid(r, `${SECRET}x`), 'and not one of another secret');
    t.equal(r.headers['x-rigd-event'], 'opened', 'X-Rigd-Event');
    const delivery = rows.map(payloadOf).find((p) => p.target === 'webhook')!.delivery;
    t.equal(r.headers['x-rigd-delivery'], delivery, 'X-Rigd-Delivery is the job\'s delivery id');
    const body = JSON.parse(r.body.toString('utf8'));
    t.deepEqual(
      body,
      { event: 'opened', incident: { id: 7, kind: 'rig_offline', opened_at: event.incident.opened_at, resolved_at: null }, rig: event.rig, text: event.text },
      'body: event, incident {id, kind, opened_at, resolved_at}, rig, text',
    );
    t.equal(typeof body.text, 'string', 'a Slack incoming webhook reads "text"');

    t.equal(smtp.mails.length, 1, 'one e-mail');
    const m = smtp.mails[0];
    t.deepEqual(m.to, ['ops@example.com', 'night@example.com'], 'to every recipient');
    t.equal(m.from, 'rigd@gw.example', 'from notify.email.from');
    t.equal(m.user, 'rigd', 'logged in with the URL\'s user');
    t.equal(m.password, SMTP_PASSWORD, 'and its password');
    t.match(m.header('Subject') ?? '', /rig_offline rig rig-7: opened/, 'subject says what and which rig');
    t.match(m.raw, /Since: 2026-11-26T09:00:00.000Z/, 'body: since when');
    t.match(m.raw, /Last position: 47.3769, 8.5417/, 'where it was last');
    t.match(m.raw, /http:\/\/localhost:3000\/rigs\/rig-7/, 'a link to the rig page');
    const mailDelivery = rows.map(payloadOf).find((p) => p.target === 'email')!.delivery;
    t.match(m.header('Message-ID') ?? '', new RegExp(`^<${mailDelivery}@`), 'the Message-ID carries the delivery id');

    const logText = s.logs.join('\n');
    t.match(logText, /notification sent/, 'deliveries are logged');
    for (const secret of [SECRET, PATH_TOKEN, SMTP_PASSWORD]) {
      t.notOk(logText.includes(secret), `the log never shows ${secret.slice(0, 8)}…`);
      t.notOk(rows.some((row) => row.payload.includes(secret)), `nor does the jobs table (${secret.slice(0, 8)}…)`);
    }
  } finally {
    await s.close();
    await http.close();
    await smtp.close();
  }
});

test('a final refusal (410, SMTP 550) fails the job at once with a warn line; a 503 is retried until taken', async (t) => {
  const http = await startHttpSink();
  const smtp = await startSmtpSink();
  smtp.refuseRecipients = 550;
  let busy = 2;
  http.statusFor = (p) => (p === '/gone' ? 410 : p === '/busy' && busy-- > 0 ? 503 : 200);
  const s = await setup({
    webhooks: [{ url: http.url('/gone') }, { url: http.url('/busy') }],
    email: { smtp_url: `smtp://127.0.0.1:${smtp.port}`, from: 'rigd@gw.example', to: 'ops@example.com' },
    first_retry_s: 0.2,
  });
  try {
    await s.db.writes.run((tx) => s.notifier.enqueue(offlineEvent(1), tx));
    const rows = await settled(s.db, 3);
    const byTarget = (path: string) => rows.find((r) => http.received.some((x) => x.path === path && x.headers['x-rigd-delivery'] === payloadOf(r).delivery))!;
    const gone = byTarget('/gone');
    t.equal(gone.state, 'failed', '410: failed');
    t.equal(gone.error_code, 'refused', 'as refused');
    t.equal(gone.attempts, 1, 'after one attempt');
    t.equal(http.received.filter((x) => x.path === '/gone').length, 1, 'the receiver was asked once');
    const busyRow = byTarget('/busy');
    t.equal(busyRow.state, 'done', '503: retried until taken');
    t.equal(busyRow.attempts, 3, 'on the third attempt');
    t.equal(new Set(http.received.filter((x) => x.path === '/busy').map((x) => x.headers['x-rigd-delivery'])).size, 1, 'every retry carries the same delivery id');
    const mail = rows.find((r) => payloadOf(r).target === 'email')!;
    t.equal(mail.state, 'failed', 'SMTP 550: failed');
    t.equal(mail.error_code, 'refused', 'as refused');
    t.equal(mail.attempts, 1, 'after one attempt');
    const warns = s.logs.filter((l) => /refused by its receiver/.test(l));
    t.equal(warns.length, 2, 'one warn line per refusal');
    t.ok(warns.every((l) => /"level":"warn"|"level":40/.test(l)), 'at warn level');
  } finally {
    await s.close();
    await http.close();
    await smtp.close();
  }
});

test('a receiver down for longer than notify.retry_hours: given up with a warn line, nothing sent', async (t) => {
  const http = await startHttpSink();
  await http.down();
  // 0.002 h = 7.2 s of retries, from 0.2 s apart.
  const s = await setup({ webhooks: [{ url: http.url('/down') }], retry_hours: 0.002, first_retry_s: 0.2 });
  try {
    await s.db.writes.run((tx) => s.notifier.enqueue(offlineEvent(1), tx));
    const [row] = await settled(s.db, 1);
    t.equal(row.state, 'failed', 'failed');
    t.equal(row.error_code, 'gave_up', 'given up');
    t.match(row.last_error ?? '', /given up after 0.002 h: .*ECONNREFUSED/, 'saying why and what the receiver did');
    t.ok(row.attempts >= 1, `after ${row.attempts} attempt(s)`);
    t.equal(http.received.length, 0, 'nothing was received');
    t.ok(s.logs.some((l) => /given up: not delivered within notify.retry_hours/.test(l)), 'a warn line says so');
  } finally {
    await s.close();
  }
});

test('a webhook removed from the config: its queued notifications fail as target_gone', async (t) => {
  const http = await startHttpSink();
  const dataDir = tmpDir('rigd-notify-');
  const before = testConfig({ data_dir: dataDir, notify: { webhooks: [{ url: http.url('/old'), secret: '', events: ['*'] }] } } as Parameters<typeof testConfig>[0]);
  const db = await openDatabase(dataDir, testDb(dataDir));
  await db.writes.run((tx) => new Notifier(before.notify).enqueue(offlineEvent(1), tx));
  await db.close();
  const after = testConfig({ data_dir: dataDir, notify: { webhooks: [{ url: http.url('/new'), secret: '', events: ['*'] }] } } as Parameters<typeof testConfig>[0]);
  const db2 = await openDatabase(dataDir, testDb(dataDir));
  const logs: string[] = [];
  const worker = new NotifyWorker(db2, after, createLogger('info', (l) => logs.push(l)), { pollMs: 50 });
  try {
    await worker.start();
    const [row] = await settled(db2, 1);
    t.equal(row.state, 'failed', 'failed');
    t.equal(row.error_code, 'target_gone', 'as target_gone');
    t.equal(http.received.length, 0, 'not sent to the new webhook');
    t.ok(logs.some((l) => /target is no longer configured/.test(l)), 'with a warn line');
  } finally {
    await worker.stop();
    await db2.close();
    await http.close();
  }
});

test('a receiver slower than notify.timeout_s: the attempt ends, is retried with the same delivery id, and goes through once it answers in time', async (t) => {
  const http = await startHttpSink();
  http.delayMs = 5000;
  const s = await setup({ webhooks: [{ url: http.url('/slow') }], timeout_s: 0.5, first_retry_s: 0.2 });
  try {
    await s.db.writes.run((tx) => s.notifier.enqueue(offlineEvent(1), tx));
    const retried = await waitFor(async () => {
      const [row] = await notifyJobs(s.db);
      return row && row.attempts >= 2 ? row : null;
    }, 60_000, 'a second attempt', 50);
    t.match(retried.last_error ?? '', /no answer within 0.5 s/, 'the slow attempt ended at the timeout');
    http.delayMs = 0;
    const [row] = await settled(s.db, 1);
    t.equal(row.state, 'done', 'done once the receiver answers in time');
    const ids = new Set(http.received.map((r) => r.headers['x-rigd-delivery']));
    t.deepEqual([...ids], [payloadOf(row).delivery], 'every request the receiver saw carries the one delivery id (its key to drop repeats)');
  } finally {
    await s.close();
    await http.close();
  }
});
