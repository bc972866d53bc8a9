// rigd db copy --to postgres://...: a SQLite install filled through the real API (child rigd serve, rig
// reports from a network namespace, a login, an upload, a capture), copied by bin/rigd as a child
// process, then served from PostgreSQL on the same data_dir. And what it refuses.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import test from 'tape';
import { makeCapture, makeHostileCapture } from '../helpers/capture-files.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { put } from '../helpers/data-dir-captures.ts';
import { databaseUrlFor, postgresOnly } from '../helpers/dialect.ts';
import { http } from '../helpers/http.ts';
import { createHosts } from '../helpers/netns.ts';
import { RIGD, rigdEnv } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const SECRET = 'Sup3r-S3cret-pw';
const PASSWORD = 'ana-password-1';

/** A fresh PostgreSQL database of the test cluster, its URL carrying a password (the test cluster trusts local clients). */
function targetUrl(): string {
  const url = new URL(databaseUrlFor(tmpDir()));
  url.username = 'postgres';
  url.password = SECRET;
  return url.toString();
}

function psql(url: string, sql: string, env: NodeJS.ProcessEnv = process.env): string {
  const plain = new URL(url);
  plain.password = '';
  return execFileSync('psql', ['-qAtX', plain.toString(), '-c', sql], { encoding: 'utf8', env }).trim();
}

/** A data_dir on SQLite whatever engine the suite runs on. */
function sqliteEnv(dataDir: string): Record<string, string> {
  return { RIGD_DATA_DIR: dataDir, RIGD_DATABASE_URL: '' };
}

function counts(stdout: string): Record<string, [number, number, string]> {
  const out: Record<string, [number, number, string]> = {};
  for (const line of stdout.split('\n')) {
    const m = /^(\S.*?)\s{2,}(\d+)\s+(\d+)\s+(ok|DIFFERS)$/.exec(line);
    if (m) out[m[1]!] = [Number(m[2]), Number(m[3]), m[4]!];
  }
  return out;
}

async function login(base: string): Promise<string> {
  const res = await http(`${base}/api/v1/sessions`, { method: 'POST', json: { login: 'ana', password: PASSWORD } });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { token: string }).token;
}

test('a SQLite install moves to PostgreSQL: everything is found through the API afterwards', async (t) => {
  if (postgresOnly(t, 'the copy needs a PostgreSQL target')) return;
  const dataDir = tmpDir();
  const env = sqliteEnv(dataDir);
  const url = targetUrl();
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: PASSWORD });
  t.equal(add.code, 0, add.stderr);
  const hostile = path.join(tmpDir(), 'bad.sqlite');
  await makeHostileCapture(hostile, 'trigger');
  await put(dataDir, 'rig-a/bad.sqlite', hostile);

  const net = await createHosts([{ name: 'rigs', addr: '10.144.160.2', gw: '10.144.160.1' }]);
  let server: ServeProcess | undefined;
  let token = '';
  try {
    server = await serveProcess(env, ['--port', '0', '--host', '0.0.0.0']);
    const port = new URL(server.url).port;
    const rigBase = `http://10.144.160.1:${port}`;
    const report = (lat: string) =>
      net.request('rigs', {
        url: `${rigBase}/api/v1/rigs/rig-a`,
        method: 'PUT',
        headers: { host: 'vpn.rigs.internal', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ rig_serial: 'SN-A', gpsd_latitude: lat, gpsd_longitude: '8.54', software_version: '3.1.0', git_branch: 'main' }).toString(),
      });
    for (const lat of ['47.1', '47.2', '47.3']) t.equal((await report(lat)).status, 200, `rig report ${lat}`);
    const upload = await net.request('rigs', { url: `${rigBase}/api/v1/rigs/upload?key=rig-a/one.sqlite&size=1234`, method: 'GET', headers: { host: 'vpn.rigs.internal' } });
    t.equal(upload.status, 200, `an upload is reserved ${upload.body}`);
    token = await login(server.url);
    const ingest = await rigd(['ingest', 'rig-a/bad.sqlite', '--wait'], { env, timeoutMs: 60_000 });
    t.equal(ingest.code, 1, 'the capture is taken in and fails (its state is copied too)');
  } finally {
    if (server) t.equal(await server.stop(), 0, 'rigd serve stopped');
    await net.destroy();
  }

  const copy = await rigd(['db', 'copy', '--to', url], { env, timeoutMs: 120_000 });
  t.equal(copy.code, 0, `exit 0 ${copy.stderr}`);
  const c = counts(copy.stdout);
  t.deepEqual([c.users, c.sessions, c.rigs, c.rig_reports, c.uploads, c.captures], [[1, 1, 'ok'], [1, 1, 'ok'], [1, 1, 'ok'], [3, 3, 'ok'], [1, 1, 'ok'], [1, 1, 'ok']], `counts per table, source and target:\n${copy.stdout}`);
  t.ok(c.jobs && c.jobs[0] >= 1 && c.jobs[2] === 'ok', 'jobs too (derived from the schema, not a list)');
  t.notOk(c.schema_migrations, 'schema_migrations is the target\'s own (migrated, not copied)');
  t.match(copy.stdout, /database:\n {2}url: "postgres:\/\/postgres:\*\*\*@[^"]+"\n/, 'the config change, password masked');
  t.match(copy.stdout, /RIGD_DATABASE_URL=postgres:\/\/postgres:\*\*\*@/, 'and the environment variable');
  t.match(copy.stdout, /\ncluster:\n {2}single_node: true\n/, 'the embedded store: cluster.single_node: true in the config change');
  t.match(copy.stdout, / and RIGD_CLUSTER_SINGLE_NODE=true\n/, 'and in the environment');
  t.match(copy.stdout, /serves one node only;\nto run several nodes, move the objects to MinIO and set storage\.driver: minio instead\./, 'and why, with the way to several nodes');
  t.match(copy.stdout, /SQLite files .* are left untouched/, 'says the SQLite file is left as it was');
  t.notOk((copy.stdout + copy.stderr).includes(SECRET), 'the password is never printed');

  const json = await rigd(['db', 'copy', '--to', url, '--json'], { env });
  t.equal(json.code, 1, 'a second copy into the same (now full) database is refused');
  t.match(json.stderr, /^rigd: the target database is not empty \(.*\): copy only into a new, empty database; nothing was written\n$/, 'one line saying why');

  const pgServer = await serveProcess({ RIGD_DATA_DIR: dataDir, RIGD_DATABASE_URL: url }, ['--port', '0', '--host', '0.0.0.0']);
  const after = await createHosts([{ name: 'rigs', addr: '10.144.161.2', gw: '10.144.161.1' }]);
  try {
    const base = `http://10.144.161.1:${new URL(pgServer.url).port}`;
    const get = (p: string) => after.request('rigs', { url: `${base}${p}`, method: 'GET', headers: { host: 'vpn.rigs.internal', authorization: `Bearer ${token}` } });
    const rigs = await get('/api/v1/rigs');
    t.equal(rigs.status, 200, `the session from before still works ${rigs.body}`);
    t.match(rigs.body, /"rig-a"/, 'the rig is there');
    const history = await get('/api/v1/rigs/rig-a/reports');
    t.equal(history.status, 200, history.body);
    t.deepEqual((JSON.parse(history.body).data.reports as { gpsd_latitude: number }[]).map((r) => r.gpsd_latitude).sort(), [47.1, 47.2, 47.3], `its three reports ${history.body}`);
    const captures = await http(`${pgServer.url}/api/v1/captures`, { headers: { authorization: `Bearer ${token}` } });
    t.equal(captures.status, 200, captures.text);
    t.match(captures.text, /rig-a\/bad\.sqlite.*"failed"|"failed".*rig-a\/bad\.sqlite/s, 'the capture and its state');
    t.ok((await login(pgServer.url)).length > 0, 'the user logs in on PostgreSQL');
    t.equal(psql(url, 'SELECT COUNT(*) FROM sessions'), '2', 'a new session took a new id (sequence past the copied ids)');
    const uploads = await rigd(['uploads', '--json'], { env: { RIGD_DATA_DIR: dataDir, RIGD_DATABASE_URL: url } });
    t.match(uploads.stdout, /rig-a\/one\.sqlite/, `the upload is listed ${uploads.stderr}`);
  } finally {
    await after.destroy();
    await pgServer.stop();
  }
});

test('refusals: bad URL (exit 2), PostgreSQL already configured, unreachable server, rigd serve running', async (t) => {
  const dataDir = tmpDir();
  const env = sqliteEnv(dataDir);
  const bad = await rigd(['db', 'copy', '--to', 'mysql://u:pw@h/db'], { env });
  t.deepEqual([bad.code, bad.stderr], [2, 'rigd: --to mysql://u:***@h/db has scheme mysql (expected empty for SQLite in data_dir, or postgres:// / postgresql://)\n'], 'not postgres://: usage error, password masked');
  const unreachable = await rigd(['db', 'copy', '--to', `postgres://rigd:${SECRET}@127.0.0.1:1/rigd`], { env });
  t.equal(unreachable.code, 1, 'unreachable: exit 1');
  t.equal(unreachable.stderr.split('\n').length, 2, `one line: ${unreachable.stderr}`);
  t.notOk((unreachable.stdout + unreachable.stderr).includes(SECRET), 'no password in it');
  const already = await rigd(['db', 'copy', '--to', 'postgres://x@127.0.0.1:1/y'], { env: { RIGD_DATA_DIR: dataDir, RIGD_DATABASE_URL: `postgres://rigd:${SECRET}@127.0.0.1:1/rigd` } });
  t.equal(already.code, 1);
  t.match(already.stderr, /^rigd: rigd already runs on PostgreSQL \(database.url postgres:\/\/rigd:\*\*\*@127.0.0.1:1\/rigd\): there is no SQLite database to copy\n$/, 'nothing to copy from');

  const server = await serveProcess(env);
  try {
    const running = await rigd(['db', 'copy', '--to', 'postgres://x@127.0.0.1:1/y'], { env });
    t.equal(running.code, 1);
    t.match(running.stderr, /^rigd: rigd serve is running on .* \(pid \d+\): stop it first/, 'refused while serve runs');
  } finally {
    await server.stop();
  }
});

test('a target that is not empty is refused and left as it was', async (t) => {
  if (postgresOnly(t, 'needs a PostgreSQL target')) return;
  const dataDir = tmpDir();
  const env = sqliteEnv(dataDir);
  t.equal((await rigd(['migrate'], { env })).code, 0);
  const url = targetUrl();
  psql(url, 'CREATE TABLE users (id integer); INSERT INTO users VALUES (7)');
  const res = await rigd(['db', 'copy', '--to', url], { env });
  t.deepEqual([res.code, res.stdout], [1, ''], 'exit 1, nothing on stdout');
  t.equal(res.stderr, 'rigd: the target database is not empty (table users has 1 rows): copy only into a new, empty database; nothing was written\n');
  t.equal(psql(url, "SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = 'public'"), 'users', 'no migration ran');
});

test('a capture store with rows: its rows are copied into the target\'s store schema and read back there', async (t) => {
  if (postgresOnly(t, 'needs a PostgreSQL target')) return;
  const dataDir = tmpDir();
  const env = sqliteEnv(dataDir);
  const good = path.join(tmpDir(), 'good.sqlite');
  await makeCapture(good);
  await put(dataDir, 'rig-b/good.sqlite', good);
  const server = await serveProcess(env);
  let before = '';
  try {
    const ingest = await rigd(['ingest', 'rig-b/good.sqlite', '--wait'], { env, timeoutMs: 60_000 });
    t.equal(ingest.code, 0, ingest.stderr);
    before = (await rigd(['captures', 'query', 'SELECT * FROM readings ORDER BY 1, 2', '--csv'], { env })).stdout;
  } finally {
    await server.stop();
  }
  t.ok(before.split('\n').length > 2, 'the SQLite store holds rows');
  const url = targetUrl();
  const res = await rigd(['db', 'copy', '--to', url], { env });
  t.equal(res.code, 0, res.stderr);
  const after = await rigd(['captures', 'query', 'SELECT * FROM readings ORDER BY 1, 2', '--csv'], { env: { ...env, RIGD_DATABASE_URL: url } });
  t.equal(after.code, 0, after.stderr);
  t.equal(after.stdout, before, 'the same rows, read from PostgreSQL');
});

test('a copy killed midway leaves the SQLite source as it was', async (t) => {
  if (postgresOnly(t, 'needs a PostgreSQL target')) return;
  const dataDir = tmpDir();
  const env = sqliteEnv(dataDir);
  t.equal((await rigd(['migrate'], { env })).code, 0);
  const file = path.join(dataDir, 'rigd.sqlite');
  // Many rig reports, so the copy is still running when it is killed.
  execFileSync('sqlite3', [file, `INSERT INTO rigs (id, serial, vpn_address, version, branch, last_seen_at, created_at, updated_at) VALUES ('r1', 'S', '10.144.161.2', '', '', '2026-11-23 10:00:00.000 +00:00', '2026-11-23 10:00:00.000 +00:00', '2026-11-23 10:00:00.000 +00:00');
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
    INSERT INTO rig_reports (rig_id, received_at, serial, peer_address, version, branch) SELECT 'r1', '2026-11-23 10:00:00.000 +00:00', 'S', '10.144.161.2', '', '' FROM n;`]);
  const before = execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
  const url = targetUrl();
  const child = spawn(process.execPath, [RIGD, 'db', 'copy', '--to', url], { env: rigdEnv(env), stdio: 'ignore' });
  // Kill it once rows have reached the target. Each count is taken with the copy stopped (SIGSTOP):
  // what it finds is where the kill lands, however slowly psql runs on a busy machine.
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGSTOP');
    const n = (() => {
      try {
        // A lock the stopped copy holds fails the count at once (lock_timeout) instead of waiting on it.
        return Number(psql(url, 'SELECT COUNT(*) FROM rig_reports', { ...process.env, PGOPTIONS: '-c lock_timeout=2000' }));
      } catch {
        return 0;
      }
    })();
    if (n > 0) break;
    child.kill('SIGCONT');
  }
  child.kill('SIGKILL');
  await new Promise((r) => child.on('close', r));
  const partial = Number(psql(url, 'SELECT COUNT(*) FROM rig_reports'));
  t.ok(partial > 0 && partial < 200000, `killed midway (${partial} of 200000 reports copied)`);
  t.equal(execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0], before, 'the SQLite file is byte for byte as it was');
  const integrity = execFileSync('sqlite3', [file, 'PRAGMA integrity_check; SELECT COUNT(*) FROM rig_reports;'], { encoding: 'utf8' });
  t.equal(integrity, 'ok\n200000\n', 'and intact');
  const again = await rigd(['db', 'copy', '--to', url], { env });
  t.equal(again.code, 1, 'the half-filled target is refused');
  t.match(again.stderr, /not empty/, 'as not empty');
});

test('--json: the same counts as JSON, the target masked', async (t) => {
  if (postgresOnly(t, 'needs a PostgreSQL target')) return;
  const dataDir = tmpDir();
  const env = sqliteEnv(dataDir);
  t.equal((await rigd(['user', 'add', 'bo', '--email', 'bo@example.com', '--password-stdin'], { env, input: PASSWORD })).code, 0);
  const url = targetUrl();
  const res = await rigd(['db', 'copy', '--to', url, '--json'], { env });
  t.equal(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout) as { ok: boolean; target: string; tables: { table: string; source: number; target: number; ok: boolean }[] };
  t.equal(out.ok, true);
  t.match(out.target, /^postgres:\/\/postgres:\*\*\*@/, 'the target, password masked');
  t.deepEqual(out.tables.find((r) => r.table === 'users'), { table: 'users', source: 1, target: 1, ok: true }, 'a row per table');
  t.deepEqual(out.tables.map((r) => r.table).sort(), ['audit_head', 'audit_log', 'captures', 'incidents', 'jobs', 'login_attempts', 'nodes', 'object_owners', 'rig_reports', 'rigs', 'secrets', 'sessions', 'uploads', 'users'], 'every table the migrations make');
  const kinds = execFileSync('psql', ['-qAtX', url, '-c', 'SELECT kind FROM audit_log ORDER BY seq'], { encoding: 'utf8' }).trim().split('\n');
  t.deepEqual(kinds, ['user.add', 'db.copy'], "the target's audit log: the copied entries, then the copy");
  const verified = await rigd(['audit', 'verify'], { env: { ...env, RIGD_DATABASE_URL: url, RIGD_CLUSTER_SINGLE_NODE: 'true' } });
  t.equal(verified.code, 0, `the copied chain verifies on PostgreSQL (${verified.stderr.trim()})`);
  t.notOk(res.stdout.includes(SECRET), 'no password');
});
