// Notifications survive a receiver that is down and a `rigd serve` killed with -9 in between:
// every one arrives exactly once when the receiver is back (real serve processes, a real HTTP
// receiver and SMTP relay, SQLite or PostgreSQL).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { stringify } from 'yaml';
import { loadConfig } from '../../../src/config/load.ts';
import { openDatabase } from '../../../src/db/index.ts';
import { Notifier } from '../../../src/services/notify/notifier.ts';
import { serveProcess, type ServeProcess } from '../../helpers/serve-process.ts';
import { testDb } from '../../helpers/dialect.ts';
import { sleep, waitFor } from '../../helpers/jobs.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { notifyJobs, offlineEvent, payloadOf } from './events.ts';
import { signatureValid, startHttpSink, startSmtpSink } from './sinks.ts';

const SECRET = 'whsec-serve-7d793037a0760186574b0282f2f435e7';
const PATH_TOKEN = 'path-token-e4da3b7fbbce2345d7772b0674a318d5';
const SMTP_PASSWORD = 'relay-pw-1679091c5a880faf6fb5e6087eb1b2dc';

test('receiver down, rigd serve killed -9 and started again, receiver up: each notification arrives once', async (t) => {
  const http = await startHttpSink();
  const smtp = await startSmtpSink();
  await http.down();
  const dataDir = tmpDir('rigd-notify-serve-');
  const file = path.join(dataDir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      notify: { webhooks: [{ url: http.url(`/hooks/${PATH_TOKEN}`) }], email: { from: 'rigd@gw.example', to: ['ops@example.com'] }, first_retry_s: 0.2, retry_hours: 1 },
      ingest: { lease_s: 2 },
      // One node, as an install runs it: restarted, it is the same node again. Left to its
      // default (host:port, and the port is a free one each start) the restarted serve would be a
      // second node that sees the killed one as down: a node_down incident with notifications of
      // its own, on PostgreSQL where the killed node's row stays registered.
      cluster: { heartbeat_s: 1, instance_id: 'gw-notify-1' },
    }),
  );
  // The secrets come from the environment (file), as on an install: never from the YAML.
  const env = {
    RIGD_CONFIG: file,
    RIGD_DATA_DIR: dataDir,
    RIGD_ENV_FILE: '',
    RIGD_LOG_LEVEL: 'info',
    RIGD_LOG_FORMAT: 'json',
    RIGD_NOTIFY_WEBHOOKS_0_SECRET: SECRET,
    RIGD_NOTIFY_EMAIL_SMTP_URL: `smtp://rigd:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
  };
  const { config } = loadConfig({ file, env });
  const notifier = new Notifier(config.notify);
  const db = await openDatabase(dataDir, testDb(dataDir));
  const outputs: string[] = [];
  let serve: ServeProcess | undefined;
  try {
    serve = await serveProcess(env);
    for (const id of [1, 2, 3]) t.equal(await db.writes.run((tx) => notifier.enqueue(offlineEvent(id), tx)), 2, `incident ${id}: a webhook job and an e-mail job`);

    await waitFor(async () => smtp.mails.length >= 3, 60_000, 'the three e-mails', 50);
    const retrying = await waitFor(
      async () => {
        const hooks = (await notifyJobs(db)).filter((r) => payloadOf(r).target === 'webhook');
        return hooks.length === 3 && hooks.every((r) => r.attempts >= 2 && r.state !== 'done') ? hooks : null;
      },
      60_000,
      'every webhook job to have failed at least twice',
      50,
    );
    t.ok(retrying.every((r) => /ECONNREFUSED/.test(r.last_error ?? '')), 'the receiver is down: connection refused, retried');
    t.equal(http.received.length, 0, 'nothing received yet');

    t.equal(await serve.stop('SIGKILL').then(() => 'killed'), 'killed', 'rigd serve killed with -9');
    outputs.push(serve.output());
    serve = undefined;
    t.equal(await db.writes.run((tx) => notifier.enqueue(offlineEvent(4), tx)), 2, 'incident 4 queued while no rigd serve runs');

    serve = await serveProcess(env);
    await http.up();
    const rows = await waitFor(
      async () => {
        const all = await notifyJobs(db);
        return all.length === 8 && all.every((r) => r.state === 'done') ? all : null;
      },
      120_000,
      'all eight notifications to be delivered',
      100,
    );
    // More time for a second send of anything, should one be coming (none may).
    await sleep(1500);
    const deliveries = rows.filter((r) => payloadOf(r).target === 'webhook').map((r) => payloadOf(r).delivery).sort();
    const got = http.received.map((r) => String(r.headers['x-rigd-delivery'])).sort();
    t.deepEqual(got, deliveries, 'the receiver got each webhook notification exactly once');
    t.ok(http.received.every((r) => signatureValid(r, SECRET)), 'each signed with the secret from the environment');
    t.deepEqual(http.received.map((r) => JSON.parse(r.body.toString()).incident.id).sort(), [1, 2, 3, 4], 'incidents 1 to 4');
    const mailIds = smtp.mails.map((m) => /^<([^@]+)@/.exec(m.header('Message-ID') ?? '')?.[1]).sort();
    t.deepEqual(mailIds, rows.filter((r) => payloadOf(r).target === 'email').map((r) => payloadOf(r).delivery).sort(), 'each e-mail exactly once');
    t.ok(smtp.mails.every((m) => m.password === SMTP_PASSWORD), 'sent with the relay password from the environment');

    outputs.push(serve.output());
    const logs = outputs.join('\n');
    t.match(logs, /notification sent/, 'serve logged its deliveries');
    for (const secret of [SECRET, PATH_TOKEN, SMTP_PASSWORD]) t.notOk(logs.includes(secret), `rigd serve's log never shows ${secret.slice(0, 10)}…`);
  } finally {
    if (serve) await serve.stop('SIGTERM');
    await db.close();
    await http.close().catch(() => undefined);
    await smtp.close();
  }
});
