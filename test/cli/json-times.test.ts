// Every time in rigd's own JSON about rigs is ISO 8601 UTC ending in Z, whatever the gateway's zone
// (the commands run with TZ=Asia/Kolkata, +05:30): `rigd rigs show --json`, `rigd rigs --json`,
// `rigd rigs history --json`, `rigd fleet --json` as child processes, and GET /api/v1/rigs/{id}
// and GET /api/v1/rigs over a real socket. No time in JSON names the local zone (the text views do).
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { closeServer } from '../helpers/closed.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { rigd } from '../helpers/cli.ts';
import { startServer, testConfig, userWithToken, type TestServer } from '../helpers/server.ts';

const config = testConfig();
const env = { RIGD_DATA_DIR: config.data_dir, TZ: 'Asia/Kolkata' };
const HOUR = 3600_000;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
/** Keys that hold a time (null allowed where a moment may not have happened yet). */
const TIME_KEY = /(^|_)(at|start|end|since|reported|seen)$/;
/** Any string that begins like a date and time, whatever its key. */
const LOOKS_LIKE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

/** Every time field of a JSON value, as [path, value]. */
function timeFields(value: unknown, at = '$'): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => timeFields(v, `${at}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]): [string, unknown][] => {
    const p = `${at}.${k}`;
    if (TIME_KEY.test(k) && (typeof v === 'string' || v === null)) return v === null ? [] : [[p, v]];
    if (typeof v === 'string' && LOOKS_LIKE_TIME.test(v)) return [[p, v]];
    return timeFields(v, p);
  });
}

/** Asserts every time field ends in Z, and that there are at least `min` of them (never vacuous). */
function allZ(t: test.Test, what: string, value: unknown, min: number): void {
  const fields = timeFields(value);
  t.ok(fields.length >= min, `${what}: ${fields.length} time fields (at least ${min})`);
  const wrong = fields.filter(([, v]) => typeof v !== 'string' || !ISO_Z.test(v));
  t.deepEqual(wrong, [], `${what}: every time field is ISO 8601 UTC ending in Z (${fields[0]?.join(' = ')})`);
}

/** Rig7 reports over three days (the last without a fix), with an upload and a failed capture. */
const setup = fixture(async () => {
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  let at = Date.now();
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = async (agoMs: number, lat: string, version: string) => {
    at = Date.now() - agoMs;
    await rigs.report('rig7', { rig_serial: 'S7', local_ip: '192.168.1.7', software_version: version, git_branch: 'main', gpsd_latitude: lat, gpsd_longitude: lat ? '13.25' : '' }, '127.0.0.7');
  };
  await report(72 * HOUR, '1.5', '1.9');
  await report(5 * HOUR, '2.5', '2.0');
  await report(60_000, '', '2.0');
  await db.writes.run(async (transaction) => {
    const { Upload, Capture, Job } = db.models;
    await Upload.create({ rig_id: 'rig7', peer_address: '127.0.0.7', key: 'rig7/a.sqlite', expected_size: 10, project: null, url_expires_at: new Date(Date.now() + HOUR) }, { transaction });
    const job = await Job.create({ kind: 'capture', payload: '{}', max_attempts: 5, run_after: new Date(), state: 'failed', attempts: 1, error_code: 'not_sqlite', last_error: 'not a SQLite database' }, { transaction });
    await Capture.create({ bucket: 'captures', key: 'rig7/a.sqlite', etag: 'e1', size: 10, rig_id: 'rig7', project: null, job_id: job.id }, { transaction });
  });
  await db.close();
});

test('CLI JSON: rigs show, rigs, rigs history and fleet give every time in UTC with Z', async (t) => {
  await setup();
  const json = async (args: string[]) => {
    const res = await rigd(args, { env });
    t.deepEqual([res.code, res.stderr], [0, ''], `rigd ${args.join(' ')}: exit 0`);
    return JSON.parse(res.stdout) as unknown;
  };
  const show = (await json(['rigs', 'show', 'rig7', '--json'])) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  // last_report.at, first_seen.at, last_fix.at, 2 runs x 2, upload created_at, capture created/updated, 3 offline starts + 3 ends, generated_at
  allZ(t, 'rigs show --json', show, 15);
  t.equal(new Date(show.last_report.at).getTime() > Date.now() - 10 * 60_000, true, 'the Z time is the right moment');
  t.equal(show.last_report.absolute, undefined, 'no local time in JSON (the text view has it)');
  allZ(t, 'rigs --json', await json(['rigs', '--json']), 2);
  allZ(t, 'rigs history --json', await json(['rigs', 'history', 'rig7', '--since', '7d', '--json']), 3);
  allZ(t, 'fleet --json', await json(['fleet', '--json']), 2);

  const table = await rigd(['rigs', 'history', 'rig7'], { env });
  t.match(table.stdout.split('\n')[1] ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z +- +S7 /, 'the history table shows the time to the second, in UTC');
});

let s: TestServer | undefined;

test('HTTP JSON: GET /api/v1/rigs/{id} and GET /api/v1/rigs give every time in UTC with Z', async (t) => {
  await setup();
  // Loopback counts as the VPN here, so the rig routes answer on 127.0.0.1.
  s = await startServer({ data_dir: config.data_dir, database: { url: config.database.url }, vpn: { cidr: '127.0.0.0/8' } });
  const { token } = await userWithToken(s, 'ops');
  const get = async (p: string) => {
    const res = await http(`${s!.url}${p}`, { headers: { authorization: token } });
    t.equal(res.status, 200, `GET ${p}: 200`);
    return JSON.parse(res.text) as Record<string, unknown>;
  };
  allZ(t, 'GET /api/v1/rigs/rig7', (await get('/api/v1/rigs/rig7')).data, 15);
  allZ(t, 'GET /api/v1/rigs', await get('/api/v1/rigs'), 2);
});

test('teardown', async (t) => {
  if (s) await closeServer(t, s);
});
