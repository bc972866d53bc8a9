// doctor's capture store check: absent (fine, created by the first import), present and read-only
// (no file in data_dir changes), unreadable (a failure with the fix).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { captureStorePath, openCaptureStore } from '../../../src/db/capture-store/index.ts';
import { checkCaptureStore } from '../../../src/services/doctor/database.ts';
import { tmpDir } from '../../helpers/tmp.ts';

test('capture store: absent, present, damaged', async (t) => {
  const dataDir = tmpDir('rigd-doctor-store-');
  const absent = await checkCaptureStore(dataDir);
  t.deepEqual([absent.status, /does not exist yet/.test(absent.message)], ['ok', true], `absent is fine (${absent.message})`);

  const store = await openCaptureStore(dataDir);
  await store.replace(1, [{ name: 'readings', columns: [{ name: 'v', type: 'REAL' }] }], (async function* () {
    yield { table: 'readings', rows: [[1.5]], bytes: 8 };
  })());
  await store.close();
  const before = readdirSync(dataDir).sort().map((f) => [f, readFileSync(path.join(dataDir, f)).toString('hex')]);
  const present = await checkCaptureStore(dataDir);
  t.equal(present.status, 'ok', present.message);
  t.match(present.message, /capture-store\.sqlite opens: 1 capture tables/, 'names the file and its tables');
  t.deepEqual(readdirSync(dataDir).sort().map((f) => [f, readFileSync(path.join(dataDir, f)).toString('hex')]), before, 'data_dir unchanged');

  writeFileSync(captureStorePath(dataDir), 'not a database at all, just text '.repeat(200));
  const damaged = await checkCaptureStore(dataDir);
  t.equal(damaged.status, 'fail', damaged.message);
  t.ok(damaged.fix && /re-import/.test(damaged.fix), `with a fix (${damaged.fix})`);
});
