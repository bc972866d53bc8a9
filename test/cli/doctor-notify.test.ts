// rigd doctor's notifications check: notifications given up (their receiver refused or stayed down
// past notify.retry_hours) in the last 24 h make a warn with their count and the newest one's
// incident and target, without the webhook's token or secret; none given up: no warning.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { rigd, doctorLine as line, type DoctorCheck } from '../helpers/cli.ts';
import { testDb } from '../helpers/dialect.ts';
import { startNotifyWorker } from '../helpers/notify-worker.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { offlineEvent } from '../services/notify/events.ts';
import { startHttpSink } from '../services/notify/sinks.ts';



const HOOK_SECRET = 'whsec-do-not-print-0123456789';
const PATH_TOKEN = '/hooks/T0KEN-do-not-print?token=q-do-not-print';

test('doctor notifications: given up ones warn with their count, the newest incident and its target; none: no warning', async (t) => {
  const sink = await startHttpSink();
  const dataDir = tmpDir();
  const url = sink.url(PATH_TOKEN);
  // Given up at the first refusal: notify.retry_hours ends before any retry.
  const notify = { webhooks: [{ url, secret: HOOK_SECRET, events: ['*'] }], retry_hours: 0.00001, first_retry_s: 1 };
  const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_NOTIFY_WEBHOOKS_0_URL: url, RIGD_NOTIFY_WEBHOOKS_0_SECRET: HOOK_SECRET };
  const db = await openDatabase(dataDir, testDb(dataDir));
  const worker = await startNotifyWorker(db, dataDir, notify);
  const settled = (n: number) => worker.settled(n);
  try {
    let res = await rigd(['doctor'], { env });
    t.match(line(res.stdout, 'notifications'), /^ok\s+notifications\s+none given up in the last 24 h \(1 webhook, no e-mail\)$/, 'nothing sent yet: ok');

    await worker.enqueue(offlineEvent(1));
    t.equal((await settled(1))[0].state, 'done', 'a delivered notification');
    res = await rigd(['doctor'], { env });
    t.match(line(res.stdout, 'notifications'), /^ok\s+notifications\s+none given up/, 'delivered: no warning');

    sink.statusFor = () => 500;
    await worker.enqueue(offlineEvent(2));
    await settled(2);
    await worker.enqueue(offlineEvent(3, 'rig-north'));
    const rows = await settled(3);
    t.deepEqual(rows.map((r) => r.state), ['done', 'failed', 'failed'], 'the receiver answers 500: two given up');

    res = await rigd(['doctor'], { env });
    const text = line(res.stdout, 'notifications');
    t.match(
      text,
      new RegExp(`^warn\\s+notifications\\s+2 notifications given up in the last 24 h, newest: incident 3 \\(rig_offline rig-north, opened\\) to webhook 0 http://${sink.host.replace(/\./g, '\\.')}:${sink.port}/…, \\d+ s ago: `),
      text,
    );
    t.match(res.stdout, /fix: nobody was told: see the incidents with rigd alerts, why with journalctl -u rigd \| grep 'notification'/, 'the fix says where to look');
    for (const secret of ['T0KEN', 'do-not-print']) t.notOk(res.stdout.includes(secret), `no secret in the output (${secret})`);

    res = await rigd(['doctor', '--json'], { env });
    const check = (JSON.parse(res.stdout) as { checks: DoctorCheck[] }).checks.find((c) => c.check === 'notifications');
    t.equal(check?.status, 'warn', '--json: warn');
    t.match(check?.message ?? '', /^2 notifications given up in the last 24 h, newest: incident 3 /, '--json: the same message');
    t.notOk(res.stdout.includes('do-not-print'), '--json: no secret');
  } finally {
    await worker.stop();
    await db.close();
    await sink.close();
  }
});
