// Every list command with filters, run as a child process on a data_dir that has rigs, uploads,
// captures, users and audit entries: when nothing matches, the one line on stdout names every filter
// it was asked with (never "yet" when a filter was given), exit 0, nothing on stderr; --json is
// the empty list and nothing else.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

const config = testConfig();
const env = { RIGD_DATA_DIR: config.data_dir };
const HOUR = 3600_000;

/** rig7 online on branch main; rig8 stale on branch old (one report 10 min ago); an upload reserved; a failed capture; a user (and its audit entry). */
const setup = fixture(async () => {
  const add = await rigd(['user', 'add', 'ops', '--email', 'ops@example.com', '--password-stdin'], { env, input: 'ops-password-1\n' });
  if (add.code !== 0) throw new Error(`rigd user add: ${add.stderr}`);
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  let at = Date.now() - 10 * 60_000;
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = (id: string, branch: string) => rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.1.7', software_version: '2.0', git_branch: branch, gpsd_latitude: '1.5', gpsd_longitude: '2.5' }, `127.0.0.${id.slice(3)}`);
  await report('rig8', 'old');
  at = Date.now();
  await report('rig7', 'main');
  await db.writes.run(async (transaction) => {
    const { Upload, Capture, Job } = db.models;
    await Upload.create({ rig_id: 'rig7', peer_address: '127.0.0.7', key: 'rig7/a.sqlite', expected_size: 10, project: null, url_expires_at: new Date(Date.now() + HOUR) }, { transaction });
    const job = await Job.create({ kind: 'capture', payload: '{}', max_attempts: 5, run_after: new Date(), state: 'failed', attempts: 1, error_code: 'not_sqlite', last_error: 'not a SQLite database' }, { transaction });
    await Capture.create({ bucket: 'captures', key: 'rig7/a.sqlite', etag: 'e1', size: 10, rig_id: 'rig7', project: 'survey-1', job_id: job.id }, { transaction });
  });
  await db.close();
});

/** Runs `rigd ...args`, expects exit 0, nothing on stderr, and returns stdout. */
async function out(t: test.Test, args: string[]): Promise<string> {
  const res = await rigd(args, { env });
  t.deepEqual([res.code, res.stderr], [0, ''], `rigd ${args.join(' ')}: exit 0, nothing on stderr`);
  return res.stdout;
}

test('each list command: something is listed without a filter (the filters below are what empties them)', async (t) => {
  await setup();
  t.match(await out(t, ['rigs']), /rig7/, 'rigs: rig7');
  t.match(await out(t, ['captures']), /rig7\/a\.sqlite/, 'captures: one');
  t.match(await out(t, ['uploads']), /rig7\/a\.sqlite/, 'uploads: one');
  t.match(await out(t, ['rigs', 'history', 'rig8']), /S-rig8/, 'rigs history: reports');
  t.match(await out(t, ['audit']), /user\.add/, 'audit: entries');
  t.match(await out(t, ['user', 'list']), /ops/, 'user list: ops');
});

test('an empty result names every filter it was asked with', async (t) => {
  await setup();
  const cases: [string[], string][] = [
    [['rigs', '--status', 'offline'], 'no offline rigs'],
    [['rigs', '--branch', 'beta'], 'no rigs on branch beta'],
    [['rigs', '--status', 'stale', '--branch', 'main'], 'no stale rigs on branch main'],
    [['captures', '--rig', 'r9'], 'no captures match --rig r9'],
    [['captures', '--state', 'ingested'], 'no captures match --state ingested'],
    [['captures', '--rig', 'rig7', '--project', 'other one'], "no captures match --rig rig7 --project 'other one'"],
    [['uploads', '--state', 'expired'], 'no uploads match --state expired'],
    [['rigs', 'history', 'rig8', '--since', '5m'], 'no report from rig8 in the last 5m'],
  ];
  // Every audit entry is older than a second once a second has passed: the window is then empty.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  cases.push([['audit', '--since', '1s'], 'no audit entries in the last 1s']);
  for (const [args, line] of cases) t.equal(await out(t, args), `${line}\n`, `rigd ${args.join(' ')}: "${line}"`);
});

test('--json: an empty result is [] and nothing else', async (t) => {
  await setup();
  for (const args of [['rigs', '--status', 'offline'], ['captures', '--rig', 'r9'], ['uploads', '--state', 'expired'], ['rigs', 'history', 'rig8', '--since', '5m'], ['audit', '--since', '1s']]) {
    t.deepEqual(JSON.parse(await out(t, [...args, '--json'])), [], `rigd ${args.join(' ')} --json: []`);
  }
});
