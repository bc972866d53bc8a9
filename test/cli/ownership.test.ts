// test: shares etc-passwd (creates and removes a system user)
// Files rigd creates in data_dir belong to data_dir's owner, whoever runs the command. The data_dir
// belongs to a system user made for this test; rigd commands run as root (child processes), then
// rigd serve runs as that user and takes a login and a report. A root-owned rigd.sqlite-wal (what an
// older rigd run as root left) makes doctor fail and /healthz answer 503 naming it, and a login
// 503 database_read_only instead of 500; after chown, nothing stored is lost.
import test from 'tape';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { http } from '../helpers/http.ts';
import { systemUser, type SystemUser } from '../helpers/system-user.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { onPostgres, sqliteOnly } from '../helpers/dialect.ts';

const user: SystemUser = systemUser('rigdtest-own');
process.on('exit', () => user.remove());

/** A data_dir owned by the test user, inside a directory that user may traverse. */
function serviceDataDir(): string {
  const parent = tmpDir();
  chmodSync(parent, 0o755);
  const dir = path.join(parent, 'data');
  mkdirSync(dir);
  chownSync(dir, user.uid, user.gid);
  return dir;
}

/** Every path under dir (dir included) whose owner is not uid, with its owner. */
function notOwnedBy(dir: string, uid: number): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.uid !== uid) out.push(`${path.relative(dir, p) || '.'} (uid ${st.uid})`);
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(path.join(p, name));
  };
  walk(dir);
  return out;
}

const env = (dataDir: string) => ({ RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8' });
const asUser = { uid: user.uid, gid: user.gid };

async function login(url: string) {
  return http(`${url}/api/v1/sessions`, { json: { login: 'ann', password: 'ann-password-1' } });
}

async function report(url: string, rig: string) {
  return http(`${url}/api/v1/rigs/${rig}`, {
    method: 'PUT',
    headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
    body: 'rig_serial=S-1&software_version=2.0&git_branch=main',
  });
}

test('root commands on the service user\'s data_dir leave only files that user owns; rigd serve runs as it', async (t) => {
  const dataDir = serviceDataDir();
  const backups = tmpDir();
  const e = env(dataDir);
  const steps: [string, string[], string?][] = [
    ['migrate', ['migrate']],
    ['user add', ['user', 'add', 'ann', '--email', 'ann@example.com', '--password-stdin'], 'ann-password-1\n'],
    ['user list', ['user', 'list']],
    ['doctor', ['doctor']],
    ['backup', ['backup', path.join(backups, 'one.sqlite')]],
    ['restore', ['restore', path.join(backups, 'one.sqlite')]],
  ];
  for (const [name, args, input] of steps) {
    const res = await rigd(args, { env: e, input });
    if (name !== 'doctor') t.equal(res.code, 0, `rigd ${name} as root: exit 0 ${res.stderr}`);
    t.deepEqual(notOwnedBy(dataDir, user.uid), [], `after rigd ${name}: everything in data_dir belongs to ${user.name}`);
  }
  // pg_restore restores over the database in place: nothing to keep aside in data_dir.
  if (!onPostgres) t.ok(readdirSync(dataDir).some((f) => f.startsWith('rigd.sqlite.before-restore-')), 'restore kept the previous database aside (and handed it over too)');

  const refused = await rigd(['serve', '--port', '0', '--host', '127.0.0.1'], { env: e });
  t.equal(refused.code, 2, 'rigd serve as root on that data_dir: refused, exit 2');
  t.match(refused.stderr, new RegExp(`^rigd: .* belongs to ${user.name}: run rigd serve as that user .*\\n$`), `names the user: ${refused.stderr.trim()}`);

  const srv = await serveProcess(e, undefined, asUser);
  try {
    const res = await login(srv.url);
    t.equal(res.status, 200, `rigd serve as ${user.name}: a login (session write) works ${res.text}`);
    const rep = await report(srv.url, 'rig1');
    t.equal(rep.status, 200, `a rig report works ${rep.text}`);
    const health = await http(`${srv.url}/healthz`);
    t.equal(health.status, 200, `/healthz 200 ${health.text}`);
  } finally {
    t.equal(await srv.stop(), 0, 'serve stops cleanly');
  }
  t.deepEqual(notOwnedBy(dataDir, user.uid), [], 'after serve: still all the user\'s');
});

test('a root-owned rigd.sqlite-wal: doctor and /healthz name it, a login is 503 database_read_only', async (t) => {
  if (sqliteOnly(t, 'the SQLite WAL file in data_dir; a read-only PostgreSQL is test/db/postgres-faults.test.ts')) return;
  const dataDir = serviceDataDir();
  const e = env(dataDir);
  t.equal((await rigd(['migrate'], { env: e })).code, 0, 'migrate (as root)');
  const add = await rigd(['user', 'add', 'ann', '--email', 'ann@example.com', '--password-stdin'], { env: e, input: 'ann-password-1\n' });
  t.equal(add.code, 0, 'user add (as root)');
  const wal = path.join(dataDir, 'rigd.sqlite-wal');
  // What a root process left behind: owner root, 0644. A -wal the command left (SQLite keeps it when a
  // connection is not the last to close) would keep its owner if only truncated: make a new file.
  rmSync(wal, { force: true });
  writeFileSync(wal, '', { mode: 0o644 });

  const doctor = await rigd(['doctor'], { env: e, user: asUser });
  t.equal(doctor.code, 1, 'doctor (as the service user): exit 1');
  const line = doctor.stdout.split('\n').find((l) => /^fail\s+data_files\s/.test(l)) ?? '';
  t.match(line, /rigd\.sqlite-wal \(owner root, mode 0644\)/, `data_files names the file and its owner: ${line}`);

  let srv = await serveProcess(e, undefined, asUser);
  try {
    const health = await http(`${srv.url}/healthz`);
    t.equal(health.status, 503, '/healthz: 503');
    const body = health.json();
    t.ok(body.failing.includes('data_files'), `names the failing check: ${JSON.stringify(body.failing)}`);
    t.match(body.checks.data_files, /rigd\.sqlite-wal \(owner root, mode 0644\)/, `and the file and its owner: ${body.checks.data_files}`);
    const res = await login(srv.url);
    t.equal(res.status, 503, 'a login: 503, not 500');
    t.equal(res.json().error?.code, 'database_read_only', `code database_read_only: ${res.text}`);
    const rep = await report(srv.url, 'rig1');
    t.equal(rep.status, 503, 'a rig report: 503');
    t.match(rep.text, /^[^\n]+\n$/, `one line of text: ${JSON.stringify(rep.text)}`);
  } finally {
    await srv.stop();
  }

  const rootDoctor = await rigd(['doctor', '--json'], { env: e });
  const files = JSON.parse(rootDoctor.stdout).checks.find((c: { check: string }) => c.check === 'data_files');
  t.equal(files?.status, 'fail', 'doctor run as root reports it too');

  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, dataDir]);
  srv = await serveProcess(e, undefined, asUser);
  try {
    const res = await login(srv.url);
    t.equal(res.status, 200, 'after chown: the user added before logs in (nothing lost)');
    t.equal((await http(`${srv.url}/healthz`)).status, 200, '/healthz 200');
  } finally {
    await srv.stop();
  }
});
