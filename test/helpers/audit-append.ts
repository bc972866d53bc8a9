// A second (third...) rigd process appending to the audit log: `node --import tsx
// test/helpers/audit-append.ts DATA_DIR COUNT LABEL` (RIGD_DATABASE_URL in the environment names the
// database, '' for SQLite in DATA_DIR). Prints "ready" once open, waits for a line on stdin, then
// appends COUNT entries as fast as it can and prints "done N". Its last entry waits until another
// process has appended one: however the two are scheduled, their appends overlap.
import { openDatabase } from '../../src/db/index.ts';
import { appendAudit, readAudit } from '../../src/services/audit/log.ts';

const [dataDir, count, label] = process.argv.slice(2);
const db = await openDatabase(dataDir!, { url: process.env.RIGD_DATABASE_URL ?? '' });
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
let n = 0;
for (let i = 0; i < Number(count); i++) {
  if (i === Number(count) - 1) {
    while (!(await readAudit(db.reader, {})).some((e) => e.details.process !== undefined && e.details.process !== label)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  await appendAudit(db, { kind: 'login.failed', actor: null, client: `10.144.30.${label === 'a' ? 2 : 3}`, subject: `${label}${i}`, details: { process: label } });
  n++;
}
await db.close();
process.stdout.write(`done ${n}\n`);
process.exit(0);
