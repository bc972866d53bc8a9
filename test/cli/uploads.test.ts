import test from 'tape';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

test('rigd uploads lists recent uploads with state and progress', async (t) => {
  const config = testConfig();
  const env = { RIGD_DATA_DIR: config.data_dir };
  const empty = await rigd(['uploads'], { env });
  t.equal(empty.code, 0);
  t.equal(empty.stdout, 'no uploads yet\n', 'fresh data_dir');

  const app = await openApp(config);
  try {
    await app.uploads.reserve({ key: 'rig1/a.sqlite', size: '100' }, '10.144.0.9');
    const second = await app.uploads.reserve({ key: 'rig1/b.log', size: '0', project: 'p1' }, '10.144.0.9');
    app.uploads.progress.set(second.id, 0);
    await app.uploads.progress.flush();
  } finally {
    await app.close();
  }

  const json = await rigd(['uploads', '--json'], { env });
  t.equal(json.code, 0);
  const list = JSON.parse(json.stdout);
  t.equal(list.length, 2, 'both uploads');
  t.deepEqual(list.map((u: { key: string }) => u.key), ['rig1/b.log', 'rig1/a.sqlite'], 'newest first');
  t.deepEqual(Object.keys(list[1]).sort(), ['bytes_seen', 'completed_at', 'created_at', 'etag', 'id', 'key', 'project', 'rig_id', 'size', 'state', 'url_expires_at']);
  t.equal(list[1].state, 'reserved');
  t.equal(list[1].size, 100);
  t.equal(list[0].project, 'p1');

  const table = await rigd(['uploads'], { env });
  t.match(table.stdout, /^ID\s+STATE\s+RIG\s+KEY\s+SIZE\s+PROGRESS\s+PROJECT\s+RESERVED\n/, 'a table');
  t.match(table.stdout, /reserved\s+-\s+rig1\/a\.sqlite\s+100\s+0%/, 'a row with progress');
  const filtered = JSON.parse((await rigd(['uploads', '--json', '--state', 'uploaded'], { env })).stdout);
  t.deepEqual(filtered, [], '--state filters');
  const bad = await rigd(['uploads', '--state', 'done'], { env });
  t.equal(bad.code, 2, 'unknown state: usage error');
  t.match(bad.stderr, /--state must be one of reserved, uploaded, expired/);
});
