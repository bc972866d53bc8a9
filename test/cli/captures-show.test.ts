// rigd captures show ID as a child process: the --json shape (state, rig, project, key, size,
// attempts, errors, progress, and per table rows, columns in the capture's order and the time span),
// the human text, a failed capture with its error, an unknown id (one line, exit 1) and a bad id
// (exit 2).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { seedCapture } from '../helpers/seed-capture.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const dataDir = tmpDir();
const files = tmpDir();
const env = { RIGD_DATA_DIR: dataDir };
let id = 0;
let failed = 0;

test('setup: an imported capture with a timed table and an untimed one; a failed capture', async (t) => {
  const app = await openApp(testConfig({ data_dir: dataDir }));
  await app.start();
  id = await seedCapture(app, files, 'rig7/show.sqlite', [
    {
      name: 'frames',
      columns: [
        { name: 'seq', type: 'INTEGER' },
        { name: 'taken_at', type: 'TEXT' },
        { name: 'img', type: 'BLOB' },
      ],
      rows: [
        [1, '2026-11-23T08:00:00Z', null],
        [2, '2026-11-23T09:30:00Z', null],
      ],
    },
    { name: 'meta', columns: [{ name: 'k', type: 'TEXT' }, { name: 'v', type: '' }], rows: [['a', 1]] },
  ]);
  writeFileSync(path.join(files, 'junk.sqlite'), 'no database here '.repeat(20));
  await putFile(app, 'rig7/junk.sqlite', path.join(files, 'junk.sqlite'));
  const q = await app.captures.queueObject({ key: 'rig7/junk.sqlite', url: app.storage.objectUrl('rig7/junk.sqlite') });
  failed = (await settled(app, q.capture.id)).state === 'failed' ? q.capture.id : 0;
  await app.close();
  t.ok(id > 0 && failed > 0);
});

test('--json: the capture, its ingestion and its tables', async (t) => {
  const r = await rigd(['captures', 'show', String(id), '--json'], { env });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr, '');
  const d = JSON.parse(r.stdout);
  t.deepEqual(
    Object.keys(d).sort(),
    ['attempts', 'created_at', 'error_code', 'finished_at', 'id', 'key', 'last_error', 'progress', 'project', 'rig_id', 'sha256', 'size', 'started_at', 'state', 'tables', 'updated_at', 'url'],
    'the fields',
  );
  t.deepEqual([d.id, d.state, d.key, d.rig_id, d.project, d.error_code, d.last_error], [id, 'ingested', 'rig7/show.sqlite', null, null, null, null]);
  t.ok(Number.isInteger(d.size) && d.size > 0, 'size in bytes');
  t.equal(d.attempts, 1, 'attempts');
  t.match(d.sha256, /^[0-9a-f]{64}$/);
  t.deepEqual(d.tables, [
    {
      name: 'frames',
      columns: [
        { name: 'seq', type: 'INTEGER' },
        { name: 'taken_at', type: 'TEXT' },
        { name: 'img', type: 'BLOB' },
      ],
      rows: 2,
      time_column: 'taken_at',
      first: '2026-11-23T08:00:00.000Z',
      last: '2026-11-23T09:30:00.000Z',
    },
    { name: 'meta', columns: [{ name: 'k', type: 'TEXT' }, { name: 'v', type: '' }], rows: 1, time_column: null, first: null, last: null },
  ]);
});

test('the text: fields, then a table of tables with rows, time span and columns', async (t) => {
  const r = await rigd(['captures', 'show', String(id)], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^capture ${id}: ingested\\n`));
  t.match(r.stdout, /\n  key\s+rig7\/show\.sqlite\n/);
  t.match(r.stdout, /\n  attempts\s+1\n/);
  t.match(r.stdout, /\ntables \(2, 3 rows\)\n  TABLE\s+ROWS\s+TIME SPAN\s+COLUMNS\n/);
  t.match(r.stdout, /\n  frames\s+2\s+2026-11-23T08:00:00\.000Z \.\. 2026-11-23T09:30:00\.000Z \(taken_at\)\s+seq INTEGER, taken_at TEXT, img BLOB\n/);
  t.match(r.stdout, /\n  meta\s+1\s+-\s+k TEXT, v\n/);
});

test('a failed capture: its error and no tables', async (t) => {
  const json = await rigd(['captures', 'show', String(failed), '--json'], { env });
  const d = JSON.parse(json.stdout);
  t.deepEqual([d.state, d.error_code, d.tables], ['failed', 'not_sqlite', []]);
  const text = await rigd(['captures', 'show', String(failed)], { env });
  t.match(text.stdout, /\n  error\s+not_sqlite: .+\n/);
  t.match(text.stdout, /\ntables: none, its ingestion failed; rigd ingest rig7\/junk\.sqlite queues it again\n$/);
});

test('unknown id: one line, exit 1; bad id: exit 2', async (t) => {
  const unknown = await rigd(['captures', 'show', '424242'], { env });
  t.deepEqual([unknown.code, unknown.stdout, unknown.stderr], [1, '', 'rigd: capture 424242 not found\n']);
  const unknownJson = await rigd(['captures', 'show', '424242', '--json'], { env });
  t.deepEqual([unknownJson.code, unknownJson.stdout], [1, ''], '--json prints nothing on stdout for an error');
  for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
    const r = await rigd(['captures', 'show', bad], { env });
    t.equal(r.code, 2, `${bad}: exit 2`);
  }
});
