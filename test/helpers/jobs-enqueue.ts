// Child process for the queue tests: opens the database like a CLI command would, enqueues COUNT
// jobs of KIND (one transaction each), prints {"ids": [...], "committedAt": ms} and exits.
import { openDatabase } from '../../src/db/index.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { testDb } from './dialect.ts';

const [dataDir, kind, count] = process.argv.slice(2);
const db = await openDatabase(dataDir, testDb(dataDir));
const ids: number[] = [];
for (let i = 0; i < Number(count); i++) {
  const job = await db.writes.run((transaction) => enqueue(kind, { n: i }, { transaction }));
  ids.push(job.id);
}
const committedAt = Date.now();
await db.close();
process.stdout.write(JSON.stringify({ ids, committedAt }));
