// rigd doctor's notifications check and e-mail: a notification given up to some recipients stops
// warning only once e-mail to the same recipients (in any order or case) has been delivered since,
// not after a delivery to the other recipients notify.email.to was changed to. Jobs written
// before the recipients were recorded keep counting any e-mail delivery. A real SMTP relay on
// 127.0.0.1 refuses and then takes the mail; the doctor is a real rigd process (both engines).
import { QueryTypes } from 'sequelize';
import test from 'tape';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { rigd, doctorLine as line } from '../helpers/cli.ts';
import { testDb } from '../helpers/dialect.ts';
import { startNotifyWorker } from '../helpers/notify-worker.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { offlineEvent, payloadOf } from '../services/notify/events.ts';
import { startSmtpSink, type SmtpSink } from '../services/notify/sinks.ts';

const OLD = ['ops@example.com', 'night@example.com'];
const NEW = ['oncall@example.org'];

/** A notify worker sending e-mail to `to` through the sink. */
function workerFor(db: Database, dataDir: string, smtp: SmtpSink, to: string[]) {
  return startNotifyWorker(db, dataDir, { email: { smtp_url: `smtp://127.0.0.1:${smtp.port}`, from: 'rigd@gw.example', to }, retry_hours: 0.00001, first_retry_s: 1 });
}

async function doctorWith(t: test.Test, dataDir: string, smtp: SmtpSink, to: string[]): Promise<string> {
  const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_NOTIFY_EMAIL_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, RIGD_NOTIFY_EMAIL_FROM: 'rigd@gw.example', RIGD_NOTIFY_EMAIL_TO: to.join(',') };
  const res = await rigd(['doctor'], { env });
  const text = line(res.stdout, 'notifications');
  for (const addr of OLD) t.notOk(text.includes(addr), `the line does not show the earlier recipient ${addr}`);
  return text;
}

test('doctor notifications: an e-mail given up stops warning only once the same recipients have had a delivery since', async (t) => {
  const smtp = await startSmtpSink();
  const dataDir = tmpDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  try {
    smtp.refuseRecipients = 550;
    let w = await workerFor(db, dataDir, smtp, OLD);
    await w.enqueue(offlineEvent(1));
    const first = await w.settled(1);
    await w.stop();
    t.deepEqual(first.map((r) => r.state), ['failed'], 'the relay refuses the recipients: incident 1 given up');
    t.notOk(first[0]!.payload.includes('example.com'), 'the job records no recipient address');
    t.match(String((payloadOf(first[0]!) as { recipients?: unknown }).recipients), /^[0-9a-f]{16}$/, 'but a hash of the recipients');

    smtp.refuseRecipients = null;
    w = await workerFor(db, dataDir, smtp, NEW);
    await w.enqueue(offlineEvent(2));
    const second = await w.settled(2);
    await w.stop();
    t.equal(second[1]!.state, 'done', 'notify.email.to changed: incident 2 delivered to the new recipients');
    t.deepEqual(smtp.mails.map((m) => m.to), [NEW], 'to them');
    let text = await doctorWith(t, dataDir, smtp, NEW);
    t.match(text, /^warn\s+notifications\s+1 notification given up in the last 24 h, newest: incident 1 /, `a delivery to other recipients does not clear it (${text})`);
    t.match(text, /to email smtp:\/\/127\.0\.0\.1:\d+ to recipients no longer configured/, 'naming its recipients as no longer configured');
    t.notOk(text.includes(NEW[0]!), 'not the current recipients, who were not its target');

    // The earlier recipients again, in another order and case: their delivery clears it.
    w = await workerFor(db, dataDir, smtp, ['Night@Example.com', 'OPS@example.com']);
    await w.enqueue(offlineEvent(3));
    const third = await w.settled(3);
    await w.stop();
    t.equal(third[2]!.state, 'done', 'incident 3 delivered to the earlier recipients');
    text = await doctorWith(t, dataDir, smtp, OLD);
    t.match(text, /^ok\s+notifications\s+1 given up in the last 24 h, its target has delivered since/, `the same recipients delivered since: ok (${text})`);
  } finally {
    await db.close();
    await smtp.close();
  }
});

test('doctor notifications: an e-mail job recorded without recipients is cleared by any e-mail delivery, as before', async (t) => {
  const smtp = await startSmtpSink();
  const dataDir = tmpDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  try {
    smtp.refuseRecipients = 550;
    let w = await workerFor(db, dataDir, smtp, OLD);
    await w.enqueue(offlineEvent(1));
    const [failed] = await w.settled(1);
    await w.stop();
    t.equal(failed!.state, 'failed', 'incident 1 given up');
    // As written by an earlier version: target "email" only.
    const { recipients: _dropped, ...earlier } = payloadOf(failed!) as Record<string, unknown>;
    await db.sequelize.query('UPDATE jobs SET payload = ? WHERE id = ?', { replacements: [JSON.stringify(earlier), failed!.id], type: QueryTypes.UPDATE });
    let text = await doctorWith(t, dataDir, smtp, NEW);
    t.match(text, /^warn\s+notifications\s+1 notification given up/, `warns while nothing was delivered (${text})`);

    smtp.refuseRecipients = null;
    w = await workerFor(db, dataDir, smtp, NEW);
    await w.enqueue(offlineEvent(2));
    await w.settled(2);
    await w.stop();
    text = await doctorWith(t, dataDir, smtp, NEW);
    t.match(text, /^ok\s+notifications\s+1 given up in the last 24 h, its target has delivered since/, `any e-mail delivery clears it (${text})`);
  } finally {
    await db.close();
    await smtp.close();
  }
});
