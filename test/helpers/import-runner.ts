// A process that imports one capture into the store of a data_dir and reports as it goes, for tests
// that kill it: node --import tsx test/helpers/import-runner.ts FILE DATA_DIR CAPTURE_ID [STOP_AT]
// Prints "child PID", then "rows N" after each batch written, then "done N". With STOP_AT, the
// process stops itself (SIGSTOP) right after printing the first "rows N" with N >= STOP_AT, inside
// the open transaction: a kill sent when that line is read lands there, however late it is sent.
import { openTestStore as openCaptureStore } from './capture-store.ts';
import { importCapture } from '../../src/ingest/import.ts';

const [file, dataDir, id, stopAt] = process.argv.slice(2);
const store = await openCaptureStore(dataDir!);
const tables = await importCapture(file!, Number(id), store, {
  maxBytes: 1e10,
  timeoutMs: 600_000,
  onChild: (pid) => process.stdout.write(`child ${pid}\n`),
  onProgress: (p) => {
    process.stdout.write(`rows ${p.rows}\n`); // synchronous on a pipe: the line is out before the stop
    if (stopAt !== undefined && p.rows >= Number(stopAt)) process.kill(process.pid, 'SIGSTOP');
  },
});
await store.close();
process.stdout.write(`done ${tables.reduce((n, t) => n + t.rows, 0)}\n`);
