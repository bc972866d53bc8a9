// Child process for the report tests across processes: its own pool on a data_dir's database, it
// sends ROUNDS rounds of reports of RIGS rigs at once (rigs in ascending order on even rounds,
// descending on odd ones, starting with ORDER), report n of this process received at
// T0 + (2n + PARITY) s: the two processes' times interleave. Prints
// {"failed": [messages], "sent": n, "latest": ms of its last report} and exits.
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { testConfig } from './server.ts';

const [dataDir, order, parity, rounds, rigCount] = process.argv.slice(2);
export const T0 = Date.parse('2026-05-01T12:00:00.000Z');
const config = testConfig({ data_dir: dataDir });
const db = await openDatabase(config.data_dir, { url: config.database.url });
let n = 0;
let latest = 0;
const rigs = new RigService(db, config, {
  now: () => {
    latest = T0 + (2 * n++ + Number(parity)) * 1000;
    return new Date(latest);
  },
});
const ids = Array.from({ length: Number(rigCount) }, (_, i) => `rig${String(i).padStart(3, '0')}`);
const sends: Promise<void>[] = [];
for (let round = 0; round < Number(rounds); round++) {
  const ascending = (round % 2 === 0) === (order === 'asc');
  for (const id of ascending ? ids : [...ids].reverse()) sends.push(rigs.report(id, { rig_serial: `S-${process.pid}-${round}` }, '10.144.0.5'));
  await new Promise((r) => setImmediate(r));
}
const results = await Promise.allSettled(sends);
const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
await db.close();
process.stdout.write(JSON.stringify({ failed, sent: sends.length, latest }));
