// Child process for the queue tests: a runner on a data_dir with the recording handler (kind "work").
// Prints "ready <owner>" once started and "started <id>" per job; stops cleanly on SIGTERM.
import { openDatabase } from '../../src/db/index.ts';
import { heartbeatNode, registerNode } from '../../src/db/nodes.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { recordingHandler, type WorkerOptions } from './jobs.ts';
import { testDb } from './dialect.ts';

const opts = JSON.parse(process.argv[2]) as WorkerOptions;
const db = await openDatabase(opts.dataDir, testDb(opts.dataDir));
if (opts.node) {
  const self = { instanceId: opts.node, runId: `run-${process.pid}`, hostname: 'gateway', pid: 1, version: '0.1.0' };
  await registerNode(db, self, { staleMs: 60_000 });
  setInterval(() => void heartbeatNode(db, self), 100).unref();
}
const runner = new JobRunner(db, {
  node: opts.node,
  concurrency: opts.concurrency ?? 1,
  leaseMs: opts.leaseMs ?? 30_000,
  pollMs: opts.pollMs ?? 1000,
  progressIntervalMs: 100,
  backoff: { baseMs: 50, jitter: 0 },
  logger: {
    info() {},
    warn: (msg, fields) => process.stderr.write(`worker ${process.pid}: ${msg} ${JSON.stringify(fields)}\n`),
    error: (msg, fields) => process.stderr.write(`worker ${process.pid}: ${msg} ${JSON.stringify(fields)}\n`),
  },
});
runner.handle('work', recordingHandler(opts.dataDir, opts.jobMs ?? 100, (job) => process.stdout.write(`started ${job.id}\n`)));
process.once('SIGTERM', async () => {
  await runner.stop({ timeoutMs: 5000 });
  await db.close();
  process.exit(0);
});
await runner.start();
process.stdout.write(`ready ${runner.owner}\n`);
