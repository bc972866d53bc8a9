// Backup of the capture store: a 0600 copy with every committed row, written while an import holds
// the write transaction (the copy is the last commit, the import is not held up); refusals are clear.
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { sqliteOnly } from '../../helpers/dialect.ts';
import { backupCaptureStore } from '../../../src/db/capture-store/backup.ts';
import { openCaptureStore, type RowBatch } from '../../../src/db/capture-store/index.ts';
import { countRows } from '../../helpers/capture-store.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const dir = tmpDir('rigd-store-backup-');
const dataDir = path.join(dir, 'data');
const table = { name: 'readings', columns: [{ name: 'v', type: 'INTEGER' }] };

/** n rows in one batch; with a gate, `written` is called once the store asks for more (the batch is written), then the gate is awaited. */
async function* rows(n: number, gate?: Promise<void>, written?: () => void): AsyncGenerator<RowBatch> {
  yield { table: 'readings', rows: Array.from({ length: n }, (_, i) => [i]), bytes: n * 8 };
  written?.();
  await gate;
}

test('no store yet: a clear error', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  const err = await backupCaptureStore(dataDir, path.join(dir, 'none.sqlite')).catch((e: Error) => e);
  t.match((err as Error).message, /does not exist: no capture has been imported yet/, 'says why');
});

test('a copy of the last commit, 0600, taken while an import is open', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  const store = await openCaptureStore(dataDir);
  await store.replace(1, [table], rows(1000));
  let release!: () => void;
  let written!: () => void;
  const rowsWritten = new Promise<void>((r) => (written = r));
  const open = store.replace(2, [table], rows(500, new Promise<void>((r) => (release = r)), written));
  await rowsWritten; // capture 2's rows are written, not committed
  const target = path.join(dir, 'backup.sqlite');
  const res = await backupCaptureStore(dataDir, target);
  release();
  await open;
  await store.close();
  t.equal(res.file, target, 'written where asked');
  t.equal(statSync(target).mode & 0o777, 0o600, '0600');
  const copyDir = path.join(dir, 'copy');
  mkdirSync(copyDir);
  copyFileSync(target, path.join(copyDir, 'capture-store.sqlite'));
  t.equal(await countRows(copyDir, 'readings', 1), 1000, 'every committed row');
  t.equal(await countRows(copyDir, 'readings', 2), 0, 'nothing of the import that was open');
  t.equal(await countRows(dataDir, 'readings', 2), 500, 'that import committed afterwards');
  const again = await backupCaptureStore(dataDir, target).catch((e: Error) => e);
  t.match((again as Error).message, /already exists/, 'an existing target is refused');
  t.notOk(existsSync(`${target}.tmp`), 'no temp file left');
});
