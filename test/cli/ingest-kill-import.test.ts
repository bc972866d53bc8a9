// kill -9 of `rigd serve` (and of its capture child, as a kill of the service's whole cgroup does)
// while it imports a capture into the capture store: the store holds none of that capture's rows
// afterwards (the import's transaction died with the processes); after a restart the job is
// reclaimed and finishes, and every row of the capture is in the store exactly once.
//
// The import is caught under way without timing: the first rigd's capture child stops itself right
// after handing over its first rows (capture-child-stop.cjs), rigd records them as the job's
// progress, and the import can go no further until both are killed.
import path from 'node:path';
import test from 'tape';
import { captureRow, put } from '../helpers/data-dir-captures.ts';
import { countRows, storeQuery } from '../helpers/capture-store.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { killAndWait, STOP_CAPTURE_CHILD_AT_FIRST_ROWS, stoppedCaptureChild } from '../helpers/capture-child-stop.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { onPostgres } from '../helpers/dialect.ts';

const files = tmpDir();

/** Rows of the capture in a store table; 0 when the table itself was never committed. */
async function rowsOf(dataDir: string, table: string, id: number): Promise<number> {
  const [known] = onPostgres
    ? await storeQuery<{ n: number }>(dataDir, "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'rigd_captures' AND table_name = ?", [table])
    : await storeQuery<{ n: number }>(dataDir, "SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = ?", [table]);
  return known!.n === 0 ? 0 : countRows(dataDir, table, id);
}
const ROWS = 200_000;

test('rigd serve SIGKILLed mid-import: no partial rows; after restart the job finishes with every row once', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  const file = path.join(files, 'many-rows.sqlite');
  const made = await makeCapture(file, {
    tables: [
      { name: 'samples', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'data', type: 'BLOB' }, { name: 'note', type: 'TEXT' }], rows: ROWS },
      { name: 'fixes', columns: [{ name: 'at', type: 'TEXT' }, { name: 'lat', type: 'REAL' }], rows: 500 },
    ],
  });
  const TOTAL = ROWS + 500;
  await put(dataDir, 'rig5/many.sqlite', file);

  const first = await serveProcess({ ...env, ...STOP_CAPTURE_CHILD_AT_FIRST_ROWS });
  // Should a wait below fail, neither the first rigd nor its stopped child may outlive the test.
  t.teardown(() => {
    const stopped = stoppedCaptureChild(first.child.pid!);
    first.child.kill('SIGKILL');
    if (stopped) process.kill(stopped, 'SIGKILL');
  });
  t.equal((await rigd(['ingest', 'rig5/many.sqlite'], { env })).code, 0, 'queued');
  // Rows handed over and recorded (on SQLite a chunk copied in the engine, on PostgreSQL a batch written).
  const mid = await waitFor(async () => {
    const r = await captureRow(dataDir, 'rig5/many.sqlite');
    const p = r?.progress ? JSON.parse(String(r.progress)) : null;
    return r && p && p.step === 'import' && p.rows > 0 ? { r, p } : null;
  }, 120_000, 'the import to be under way', 50);
  t.ok(mid.p.rows < TOTAL, `under way: ${mid.p.rows} of ${TOTAL} rows imported`);
  const child = await waitFor(() => stoppedCaptureChild(first.child.pid!), 60_000, 'the capture child to stop at its first rows');
  t.equal(await first.stop('SIGKILL'), null, `SIGKILL at ${mid.p.rows} rows imported`);
  await killAndWait(child);
  const id = Number(mid.r.id);
  t.equal((await captureRow(dataDir, 'rig5/many.sqlite'))?.state, 'ingesting', 'left ingesting by the dead process');
  t.deepEqual([await rowsOf(dataDir, 'samples', id), await rowsOf(dataDir, 'fixes', id)], [0, 0], 'no rows of the interrupted import in the store');

  const second = await serveProcess(env);
  try {
    const done = await waitFor(async () => {
      const r = await captureRow(dataDir, 'rig5/many.sqlite');
      return r && (r.state === 'ingested' || r.state === 'failed') ? r : null;
    }, 120_000, 'the capture to be ingested after the restart', 200);
    t.equal(done.state, 'ingested', `ingested after the restart ${done.last_error ?? ''}`);
    t.equal(done.attempts, 2, 'the second attempt finished it');
    t.deepEqual(
      [await countRows(dataDir, 'samples', id), await countRows(dataDir, 'fixes', id)],
      made.tables.map((x) => x.rows),
      'every row of every table once',
    );
  } finally {
    t.equal(await second.stop(), 0, 'SIGTERM: exit 0');
  }
});
