// test: alone (a queued capture picked up within 2 s)
// rigd captures and rigd ingest as child processes next to a child `rigd serve` on the same data_dir:
// a queued capture is picked up by the server within 2 s, --wait follows it to ingested (exit 0) or
// failed (exit 1). Crash safety: `rigd serve` SIGKILLed in the middle of an ingest; after a restart
// the job completes and exactly one capture exists.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { captureRow, put } from '../helpers/data-dir-captures.ts';
import { tableShapes } from '../helpers/captures.ts';
import { makeCapture, makeHostileCapture } from '../helpers/capture-files.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

const files = tmpDir();

test('rigd captures / rigd ingest KEY --wait against a running rigd serve', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  const empty = await rigd(['captures', '--json'], { env });
  t.deepEqual([empty.code, JSON.parse(empty.stdout), empty.stderr], [0, [], ''], 'fresh data_dir: [] and exit 0');
  const none = await rigd(['captures'], { env });
  t.equal(none.stdout, 'no captures yet\n', 'a plain hint without --json');

  const good = path.join(files, 'good.sqlite');
  const made = await makeCapture(good);
  await put(dataDir, 'rig3/good.sqlite', good);
  const bad = path.join(files, 'bad.sqlite');
  await makeHostileCapture(bad, 'trigger');
  await put(dataDir, 'rig3/bad.sqlite', bad);

  const server = await serveProcess(env);
  try {
    const queued = await rigd(['ingest', 'rig3/good.sqlite', '--json'], { env });
    t.equal(queued.code, 0, `ingest without --wait exits 0 ${queued.stderr}`);
    const c = JSON.parse(queued.stdout);
    t.deepEqual([c.key, c.state], ['rig3/good.sqlite', 'queued'], '--json: the queued capture');
    const row = await waitFor(async () => {
      const r = await captureRow(dataDir, 'rig3/good.sqlite');
      return r?.started_at ? r : null;
    }, 60_000, 'the server to start the job');
    const pickup = new Date(row.started_at as Date).getTime() - new Date(row.created_at as Date).getTime();
    // A poll (1 s) or a notification picks it up; the slack is a busy machine's.
    t.ok(pickup <= 10_000, `the server picked the job up ${pickup} ms after it was queued by another process`);

    const wait = await rigd(['ingest', 'rig3/good.sqlite', '--wait'], { env, timeoutMs: 60_000 });
    t.equal(wait.code, 0, `--wait on an ingested capture: exit 0 ${wait.stderr}`);
    const rows = made.tables.reduce((n, x) => n + x.rows, 0);
    t.match(wait.stdout, new RegExp(`ingested: ${made.tables.length} tables, ${rows} rows, sha256 ${made.sha256}`), 'says what was ingested');

    const badWait = await rigd(['ingest', 'http://vpn.rigs.internal:3000/captures/rig3/bad.sqlite', '--wait'], { env, timeoutMs: 60_000 });
    t.equal(badWait.code, 1, '--wait on a hostile file: exit 1');
    t.match(badWait.stdout, /^capture \d+ \(rig3\/bad\.sqlite\) queued\ncapture \d+: queued\n/, 'progress lines while it waits');
    t.match(badWait.stderr, /^rigd: capture \d+ failed: unsupported_schema: .*trigger/i, 'one line on stderr with the reason');

    const list = await rigd(['captures', '--json'], { env });
    const captures = JSON.parse(list.stdout);
    t.deepEqual(captures.map((x: { key: string; state: string }) => [x.key, x.state]), [['rig3/bad.sqlite', 'failed'], ['rig3/good.sqlite', 'ingested']], 'captures --json, newest first');
    t.deepEqual(tableShapes(captures[1].tables), made.tables, 'tables and row counts in the JSON');
    const table = await rigd(['captures', '--state', 'ingested'], { env });
    t.match(table.stdout, /^ID\s+STATE\s+RIG\s+PROJECT\s+KEY\s+SIZE\s+ATTEMPTS\s+UPDATED\s+RESULT\n\d+\s+ingested\s+-\s+rig3\/good\.sqlite/, 'a table, filtered by state');

    const ssrf = await rigd(['ingest', 'http://169.254.169.254/captures/x.sqlite'], { env });
    t.equal(ssrf.code, 1, 'a URL that is not our storage: exit 1');
    t.match(ssrf.stderr, /^rigd: not an object URL of this storage/, 'says why');
    const missing = await rigd(['ingest', 'rig3/none.sqlite'], { env });
    t.deepEqual([missing.code, missing.stderr], [1, 'rigd: object rig3/none.sqlite not found\n'], 'an absent key: exit 1');
    const usage = await rigd(['captures', '--state', 'lost'], { env });
    t.equal(usage.code, 2, 'bad --state: usage error');
  } finally {
    t.equal(await server.stop(), 0, 'SIGTERM: exit 0');
  }
});

test('crash safety: rigd serve SIGKILLed mid-ingest; after restart the job completes, one capture', async (t) => {
  const dataDir = tmpDir();
  // 1 MiB/s read rate (ingest.read_bytes_per_s): a ~4 MB capture takes seconds to copy, so the kill lands mid-copy.
  const env = { RIGD_DATA_DIR: dataDir, RIGD_INGEST_READ_BYTES_PER_S: String(1024 * 1024) };
  const file = path.join(files, 'slow.sqlite');
  const made = await makeCapture(file, {
    tables: [{ name: 'samples', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'data', type: 'BLOB' }, { name: 'note', type: 'TEXT' }], rows: 60_000 }],
  });
  t.ok(made.sizeBytes > 3 * 1024 * 1024, `capture of ${made.sizeBytes} bytes`);
  await put(dataDir, 'rig4/slow.sqlite', file);

  const first = await serveProcess(env);
  const queued = await rigd(['ingest', 'rig4/slow.sqlite'], { env });
  t.equal(queued.code, 0, 'queued');
  // Each look is taken with the server stopped (SIGSTOP): what it sees is where the kill lands, however
  // slowly the look itself runs on a busy machine.
  const mid = await waitFor(async () => {
    first.child.kill('SIGSTOP');
    let seen = null;
    try {
      const r = await captureRow(dataDir, 'rig4/slow.sqlite');
      const p = r?.progress ? JSON.parse(String(r.progress)) : null;
      seen = p && p.step === 'download' && p.bytes > 512 * 1024 ? { r, p } : null;
    } finally {
      if (!seen) first.child.kill('SIGCONT');
    }
    return seen;
  }, 60_000, 'the copy to be under way', 50);
  t.equal(await first.stop('SIGKILL'), null, `SIGKILL at ${mid.p.bytes} of ${mid.p.total} bytes`);
  const dead = await captureRow(dataDir, 'rig4/slow.sqlite');
  t.equal(dead?.state, 'ingesting', 'left ingesting by the dead process');
  const tmp = path.join(dataDir, 'ingest-tmp');
  t.equal(readdirSync(tmp).length, 1, 'its partial copy is left behind');

  const second = await serveProcess({ RIGD_DATA_DIR: dataDir });
  try {
    const done = await waitFor(async () => {
      const r = await captureRow(dataDir, 'rig4/slow.sqlite');
      return r && (r.state === 'ingested' || r.state === 'failed') ? r : null;
    }, 60_000, 'the capture to be ingested after the restart', 100);
    t.equal(done.state, 'ingested', `ingested after the restart ${done.last_error ?? ''}`);
    t.equal(done.count, 1, 'exactly one capture for the object');
    t.equal(done.jobs, 1, 'one job');
    t.equal(done.attempts, 2, 'the second attempt finished it');
    t.equal(done.sha256, made.sha256, 'sha256 of the whole file');
    t.deepEqual(tableShapes(JSON.parse(String(done.tables))), made.tables, 'tables and row counts');
    t.deepEqual(readdirSync(tmp), [], 'the partial copy is gone');
  } finally {
    t.equal(await second.stop(), 0, 'SIGTERM: exit 0');
  }
});
