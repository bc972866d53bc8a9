// kill -9 of the importing process mid-import: the open transaction dies with it. The store keeps
// the capture's earlier rows (or none), never a part of the new ones, and a re-run imports it whole.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'tape';
import { captureStorePath } from '../../src/db/capture-store/index.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { importCapture } from '../../src/ingest/import.ts';
import { makeCapture, type MadeCapture } from '../helpers/capture-files.ts';
import { countRows, openTestStore as openCaptureStore, sqlCapture } from '../helpers/capture-store.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = tmpDir('rigd-import-kill-');
const dataDir = path.join(dir, 'data');
const OPTS = { maxBytes: 1e10, timeoutMs: 120_000 };
const ROWS = 150_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Runs the import in a process of its own and kills it with SIGKILL once `killAt` rows are written
 * (it stops itself there: the import cannot go on to its COMMIT before the kill arrives).
 */
function importAndKill(file: string, captureId: number, killAt: number): Promise<{ rowsSeen: number; childPid: number; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/helpers/import-runner.ts'), file, dataDir, String(captureId), String(killAt)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let rowsSeen = 0;
    let childPid = 0;
    let buf = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (s: string) => {
      buf += s;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const [what, n] = buf.slice(0, nl).split(' ');
        buf = buf.slice(nl + 1);
        if (what === 'child') childPid = Number(n);
        if (what === 'rows') {
          rowsSeen = Number(n);
          if (rowsSeen >= killAt) proc.kill('SIGKILL');
        }
      }
    });
    proc.on('error', reject);
    proc.on('exit', (_code, signal) => resolve({ rowsSeen, childPid, signal }));
  });
}

let big: MadeCapture;

test('kill -9 mid-import of a new capture: no rows of it; a re-run imports every row once', async (t) => {
  big = await makeCapture(path.join(dir, 'big.sqlite'), {
    tables: [
      { name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'sensor', type: 'TEXT' }, { name: 'taken_at', type: 'INTEGER' }], rows: ROWS },
      { name: 'frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'data', type: 'BLOB' }], rows: 20_000 },
    ],
  });
  // Another capture, committed before: it must come through untouched.
  const store = await openCaptureStore(dataDir);
  await importCapture(big.path, 1, store, OPTS);
  await store.close();

  const run = await importAndKill(big.path, 2, 40_000);
  t.equal(run.signal, 'SIGKILL', 'the importing process was killed with SIGKILL');
  // On SQLite progress comes per table (the child copies in the engine and waits for rigd's ack
  // before the next table and the commit): the kill lands after readings, before frames and COMMIT.
  t.ok(run.rowsSeen >= 40_000 && run.rowsSeen <= ROWS, `mid-import: ${run.rowsSeen} rows written in the open transaction`);
  if (!onPostgres) t.ok(existsSync(`${captureStorePath(dataDir)}-wal`), 'it left its WAL behind');
  const childGone = await waitFor(() => !alive(run.childPid), 60_000, `capture child ${run.childPid} to exit`).catch(() => false);
  t.ok(childGone, `its capture child ${run.childPid} exited too`);

  t.equal(await countRows(dataDir, 'readings', 2), 0, 'no rows of the killed import');
  t.equal(await countRows(dataDir, 'frames', 2), 0, 'none in the other table either');
  t.deepEqual([await countRows(dataDir, 'readings', 1), await countRows(dataDir, 'frames', 1)], [ROWS, 20_000], 'the earlier capture is whole');

  const again = await openCaptureStore(dataDir);
  const tables = await importCapture(big.path, 2, again, OPTS);
  await again.close();
  t.deepEqual(tables.map((x) => x.rows), [ROWS, 20_000], 're-run imports it');
  t.deepEqual([await countRows(dataDir, 'readings', 2), await countRows(dataDir, 'frames', 2)], [ROWS, 20_000], 'every row exactly once');
});

test('kill -9 mid-import of a capture imported before: its earlier rows stay, not a mixture', async (t) => {
  const small = await sqlCapture(path.join(dir, 'small.sqlite'), 'CREATE TABLE readings (id INTEGER, sensor TEXT, taken_at INTEGER)', "INSERT INTO readings VALUES (1, 'old', 5)");
  const store = await openCaptureStore(dataDir);
  await importCapture(small.path, 3, store, OPTS);
  await store.close();
  const run = await importAndKill(big.path, 3, 30_000);
  t.equal(run.signal, 'SIGKILL', 'killed');
  t.equal(await countRows(dataDir, 'readings', 3), 1, 'the one earlier row of capture 3, nothing of the killed run');
  t.equal(await countRows(dataDir, 'frames', 3), 0, 'no frames');
});
