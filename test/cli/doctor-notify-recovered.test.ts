// rigd doctor's notifications check warns only about given-up notifications whose target has
// delivered nothing since: two webhooks on a real HTTP receiver answer 500 until their jobs give
// up (warn), then one of them is fixed and delivers the next incident (its given-up ones no longer
// count, the other's still do), then the other (ok, saying they were given up and delivered since).
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { rigd, doctorLine as line } from '../helpers/cli.ts';
import { testDb } from '../helpers/dialect.ts';
import { startNotifyWorker } from '../helpers/notify-worker.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { offlineEvent, payloadOf } from '../services/notify/events.ts';
import { startHttpSink } from '../services/notify/sinks.ts';

const TOKEN_A = '/hooks/a/T0KEN-A-do-not-print';
const TOKEN_B = '/hooks/b/T0KEN-B-do-not-print';

test('doctor notifications: a given-up notification stops warning once its target has delivered since', async (t) => {
  const sink = await startHttpSink();
  const dataDir = tmpDir();
  const [urlA, urlB] = [sink.url(TOKEN_A), sink.url(TOKEN_B)];
  const broken = new Set([TOKEN_A, TOKEN_B]);
  sink.statusFor = (path) => (broken.has(path) ? 500 : 200);
  // Given up at the first refusal: notify.retry_hours ends before any retry.
  const notify = { webhooks: [{ url: urlA, events: ['*'] }, { url: urlB, events: ['*'] }], retry_hours: 0.00001, first_retry_s: 1 };
  const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_NOTIFY_WEBHOOKS_0_URL: urlA, RIGD_NOTIFY_WEBHOOKS_1_URL: urlB };
  const db = await openDatabase(dataDir, testDb(dataDir));
  const worker = await startNotifyWorker(db, dataDir, notify);
  const settled = (n: number) => worker.settled(n);
  const states = (rows: Awaited<ReturnType<typeof settled>>) => rows.map((r) => `${payloadOf(r).event.incident.id}:${r.state}`);
  const doctor = async () => {
    const res = await rigd(['doctor'], { env });
    for (const secret of ['T0KEN', 'do-not-print']) t.notOk(res.stdout.includes(secret), `no secret in the output (${secret})`);
    return line(res.stdout, 'notifications');
  };
  try {
    await worker.enqueue(offlineEvent(1));
    t.deepEqual(states(await settled(2)), ['1:failed', '1:failed'], 'both webhooks answer 500: incident 1 given up to each');
    let text = await doctor();
    t.match(text, /^warn\s+notifications\s+2 notifications given up in the last 24 h, newest: incident 1 /, text);

    broken.delete(TOKEN_A);
    await worker.enqueue(offlineEvent(2));
    const rows = await settled(4);
    t.deepEqual(states(rows).slice(2).sort(), ['2:done', '2:failed'], 'webhook 0 fixed: incident 2 delivered to it, given up to webhook 1');
    text = await doctor();
    const host = `http://${sink.host.replace(/\./g, '\\.')}:${sink.port}/…`;
    t.match(text, new RegExp(`^warn\\s+notifications\\s+2 notifications given up in the last 24 h, newest: incident 2 \\(rig_offline rig-2, opened\\) to webhook 1 ${host}`), `webhook 0 delivered since: only webhook 1's count (${text})`);

    broken.delete(TOKEN_B);
    await worker.enqueue(offlineEvent(3));
    t.deepEqual(states(await settled(6)).slice(4), ['3:done', '3:done'], 'both fixed: incident 3 delivered to each');
    text = await doctor();
    t.match(text, /^ok\s+notifications\s+3 given up in the last 24 h, their targets have delivered since \(2 webhooks, no e-mail\)$/, `both delivered since: ok (${text})`);
  } finally {
    await worker.stop();
    await db.close();
    await sink.close();
  }
});
