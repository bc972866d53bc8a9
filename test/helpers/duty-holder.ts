// Child process for the cluster duties tests: ClusterDuties over one task on a data_dir's database,
// trying the lock every 100 ms. Prints "ready" once started, "duty started" / "duty stopped" as the
// task is started and stopped; stops cleanly on SIGTERM.
import { openDatabase } from '../../src/db/index.ts';
import { silentLogger } from '../../src/log.ts';
import { ClusterDuties } from '../../src/services/cluster/duties.ts';
import { testDb } from './dialect.ts';

const dataDir = process.argv[2]!;
const db = await openDatabase(dataDir, testDb(dataDir));
const task = {
  start: () => void process.stdout.write('duty started\n'),
  stop: () => void process.stdout.write('duty stopped\n'),
};
const duties = new ClusterDuties(db, [task], 100, silentLogger);
process.once('SIGTERM', async () => {
  await duties.stop();
  await db.close();
  process.exit(0);
});
await duties.start();
process.stdout.write('ready\n');
