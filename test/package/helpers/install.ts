// The package installed for real on a clean Debian root (test/package/install-*.test.ts): apt
// installs it and nothing else; inside the root, as an operator would: `rigd doctor`, `rigd user
// add`, `rigd serve` started as the rigd user with the unit's ExecStart, Environment= and
// EnvironmentFile=, a login and a rig report over real sockets (the rig from a 10.144.x.x address in
// a network namespace), `rigd backup`; remove and purge as docs/install.md says; then an upgrade
// from the previous version (this tree built as 0.0.9) that keeps data, config and secrets.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'tape';
import { ROOT } from '../../helpers/cli.ts';
import { createHosts, type Hosts } from '../../helpers/netns.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { DebianRoot, rootTarball } from './debian-root.ts';
import { buildPackage } from './package.ts';
import { parseEnvFile, unitExec } from './unit-exec.ts';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version.replace('-', '~');
const PREVIOUS = '0.0.9';
const PASSWORD = 'a long enough password';
/** What an operator puts in /etc/rigd/rigd.env: a secret, a port any test may use, a fast bcrypt. */
const ENV_FILE = 'RIGD_INGEST_WEBHOOK_TOKEN=webhook-secret-0123456789abcdef\nRIGD_SERVER_PORT=0\nRIGD_AUTH_BCRYPT_COST=4\n';

interface Served {
  port: number;
  stop(): Promise<number | null>;
}

/** Starts rigd serve as systemd would from the installed unit; resolves once it listens. */
async function serve(root: DebianRoot): Promise<Served> {
  const unit = unitExec(readFileSync(root.file('lib/systemd/system/rigd.service'), 'utf8'));
  const fileEnv = unit.envFile && existsSync(root.file(unit.envFile)) ? parseEnvFile(readFileSync(root.file(unit.envFile), 'utf8')) : {};
  const child = root.spawn(['/bin/sh', '-c', `umask ${unit.umask} && cd ${unit.cwd} && exec "$@"`, 'rigd.service', ...unit.argv], { user: unit.user, env: { ...unit.env, ...fileEnv } });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rigd serve did not listen: ${output.slice(-2000)}`)), 180_000);
    const onData = (d: Buffer) => {
      output += d;
      const m = /rigd listening on http:\/\/\S+:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rigd serve exited ${code}: ${output.slice(-2000)}`));
    });
  });
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.on('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

async function login(port: number, user: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ login: user, password: PASSWORD }),
  });
  const body = (await res.json()) as { token?: string };
  return { status: res.status, token: body.token };
}

function report(net: Hosts, port: number, rig: string) {
  const body = new URLSearchParams({ rig_serial: `SN-${rig}`, gpsd_latitude: '47.37', gpsd_longitude: '8.54', local_ip: '192.168.1.2', software_version: '1.2.3', git_branch: 'main' });
  return net.request('rig', {
    url: `http://${net.hosts.rig.serverAddr}:${port}/api/v1/rigs/${rig}`,
    method: 'PUT',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
}

function rigIds(root: DebianRoot): string[] {
  const res = root.run(['rigd', 'rigs', '--json']);
  try {
    return (JSON.parse(res.stdout) as { id: string }[]).map((r) => r.id);
  } catch {
    return [`rigd rigs --json: ${res.code} ${res.stderr.trim()}`];
  }
}

function sha(root: DebianRoot, file: string): string {
  return existsSync(root.file(file)) ? createHash('sha256').update(readFileSync(root.file(file))).digest('hex') : 'missing';
}

/** All the tests for one Debian release (suite: its code name), on one root. */
export function installTests(suite: string, name: string, subnet: number): void {
  const out = tmpDir('rigd-install-');
  let root: DebianRoot | null = null;
  let net: Hosts | null = null;
  const debs: Record<string, string> = {};

  const apt = (...args: string[]) => root!.run(['apt', '-y', '-o', 'Dpkg::Use-Pty=0', ...args], { timeout: 900_000 });
  const install = (version: string) => {
    const name = path.basename(debs[version]);
    copyFileSync(debs[version], root!.file(`tmp/${name}`));
    // As an operator types it, in the directory that holds the package.
    return root!.run(['sh', '-c', `cd /tmp && apt -y -o Dpkg::Use-Pty=0 install ./${name}`], { timeout: 900_000 });
  };

  test(`${name}: the packages (${VERSION} and ${PREVIOUS}) and a clean ${suite} root without Node`, async (t) => {
    for (const version of [VERSION, PREVIOUS]) {
      const built = buildPackage(out, version === VERSION ? {} : { version });
      t.ok(built.deb, `rigd_${version}_amd64.deb builds (${built.stderr.split('\n').pop() || 'ok'})`);
      if (built.deb) debs[version] = built.deb;
    }
    const { tar, error } = rootTarball(suite);
    t.ok(tar, `mmdebstrap ${suite} from Debian's archive (${error || 'ok'})`);
    if (!tar) return t.end();
    // Not under tmpDir: its exit handler removes recursively, and /proc may still be mounted then.
    root = DebianRoot.unpack(tar, path.join(mkdtempSync(path.join(os.tmpdir(), 'rigd-root-')), 'root'));
    process.on('exit', () => root?.destroy());
    t.notEqual(root.run(['sh', '-c', 'command -v node || command -v nodejs']).code, 0, 'no node on its PATH');
    t.notEqual(root.run(['dpkg', '-s', 'nodejs']).code, 0, 'no nodejs package');
    net = await createHosts([{ name: 'rig', addr: `10.144.${subnet}.2`, gw: `10.144.${subnet}.1` }]);
    t.end();
  });

  test(`${name}: apt install ./rigd_${VERSION}_amd64.deb, then doctor, user add, serve, login, rig report, backup`, async (t) => {
    if (!root || !net) return t.end();
    const res = install(VERSION);
    t.equal(res.code, 0, `apt install (${res.code === 0 ? 'ok' : `${res.stdout}${res.stderr}`.slice(-1500)})`);
    if (res.code !== 0) {
      root.destroy();
      root = null;
      return t.end();
    }
    t.notEqual(root.run(['dpkg', '-s', 'nodejs']).code, 0, 'apt brought no nodejs');
    t.notEqual(root.run(['sh', '-c', 'command -v node']).code, 0, 'and no node on the PATH');
    t.equal(root.run(['id', '-u', 'rigd']).code, 0, 'the rigd system user');
    // A system node of another version (or one that refuses to run) changes nothing.
    writeFileSync(root.file('usr/local/bin/node'), '#!/bin/sh\necho "v18.19.0: the system node was used" >&2\nexit 97\n', { mode: 0o755 });
    t.equal(root.run(['rigd', '--version']).stdout.trim(), VERSION.replace('~', '-'), 'rigd --version, with another node first on the PATH');
    writeFileSync(root.file('etc/rigd/rigd.env'), ENV_FILE, { mode: 0o600 });

    const add = root.run(['rigd', 'user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { input: PASSWORD });
    t.equal(add.code, 0, `rigd user add (${add.stderr.trim() || 'ok'})`);
    const served = await serve(root);
    const session = await login(served.port, 'ana');
    t.equal(session.status, 200, 'POST /api/v1/sessions: 200');
    t.ok(session.token, 'a token');
    const rig = await report(net, served.port, 'rig-1');
    t.equal(rig.status, 200, `PUT /api/v1/rigs/rig-1 from 10.144.${subnet}.2: ${rig.status} ${rig.body}`);
    t.equal(rig.body, 'Ok');
    t.deepEqual(rigIds(root), ['rig-1'], 'rigd rigs lists the rig');
    // While the service runs, as an operator checks a new install.
    const doctor = root.run(['rigd', 'doctor', '--json']);
    let checks: { check: string; status: string; message: string }[] = [];
    try {
      checks = (JSON.parse(doctor.stdout) as { checks: typeof checks }).checks;
    } catch {
      t.fail(`rigd doctor --json printed no report: ${doctor.stderr}`);
    }
    t.ok(checks.length > 3, `rigd doctor: ${checks.map((c) => `${c.check} ${c.status}`).join(', ')}`);
    t.deepEqual(checks.filter((c) => c.status === 'fail').map((c) => `${c.check}: ${c.message}`), [], 'no check fails');
    t.equal(doctor.code, 0, 'rigd doctor exits 0');

    const backup = root.run(['rigd', 'backup', '/root/rigd-backup.sqlite']);
    t.equal(backup.code, 0, `rigd backup while serve runs (${backup.stderr.trim() || 'ok'})`);
    t.equal(existsSync(root.file('root/rigd-backup.sqlite')) && readFileSync(root.file('root/rigd-backup.sqlite')).subarray(0, 15).toString(), 'SQLite format 3', 'the backup is a SQLite database');
    t.equal(await served.stop(), 0, 'serve stops cleanly on SIGTERM');
    const owners = root.run(['stat', '-c', '%U %a', '/var/lib/rigd', '/var/lib/rigd/rigd.sqlite']).stdout.trim().split('\n');
    t.deepEqual(owners.map((o) => o.split(' ')[0]), ['rigd', 'rigd'], `data_dir and database belong to rigd (${owners.join(', ')})`);
    t.end();
  });

  test(`${name}: apt remove keeps config and data; apt purge removes them`, (t) => {
    if (!root) return t.end();
    const remove = apt('remove', 'rigd');
    t.equal(remove.code, 0, 'apt remove rigd');
    t.notOk(existsSync(root.file('usr/lib/rigd')) || existsSync(root.file('usr/bin/rigd')), 'the program is gone');
    for (const kept of ['etc/rigd/config.yaml', 'etc/rigd/rigd.env', 'var/lib/rigd/rigd.sqlite']) t.ok(existsSync(root.file(kept)), `/${kept} kept`);
    const purge = apt('purge', 'rigd');
    t.equal(purge.code, 0, 'apt purge rigd');
    for (const gone of ['etc/rigd', 'var/lib/rigd']) t.notOk(existsSync(root.file(gone)), `/${gone} removed`);
    t.equal(root.run(['id', '-u', 'rigd']).code, 0, 'the rigd user stays');
    t.end();
  });

  test(`${name}: ${PREVIOUS} upgraded to ${VERSION} keeps data, config and secrets`, async (t) => {
    if (!root || !net || !debs[PREVIOUS]) return t.end();
    t.equal(install(PREVIOUS).code, 0, `apt install ./rigd_${PREVIOUS}_amd64.deb`);
    t.equal(root.run(['rigd', '--version']).stdout.trim(), PREVIOUS, `rigd ${PREVIOUS}`);
    writeFileSync(root.file('etc/rigd/rigd.env'), ENV_FILE, { mode: 0o600 });
    const config = readFileSync(root.file('etc/rigd/config.yaml'), 'utf8').replace(/^(\s*online_after_s:) \d+/m, '$1 240');
    writeFileSync(root.file('etc/rigd/config.yaml'), config);
    const add = root.run(['rigd', 'user', 'add', 'ben', '--email', 'ben@example.com', '--password-stdin'], { input: PASSWORD });
    t.equal(add.code, 0, `a user (${add.stderr.trim() || 'ok'})`);
    const before = await serve(root);
    t.equal((await report(net, before.port, 'rig-old')).status, 200, 'a rig report');
    t.equal(await before.stop(), 0, 'stopped');
    const secrets = ['etc/rigd/rigd.env', 'etc/rigd/config.yaml', 'var/lib/rigd/cookie-secret'].map((f) => [f, sha(root!, f)]);

    const res = install(VERSION);
    t.equal(res.code, 0, `apt install ./rigd_${VERSION}_amd64.deb upgrades (${res.code === 0 ? 'ok' : res.stderr.slice(-800)})`);
    t.equal(root.run(['rigd', '--version']).stdout.trim(), VERSION.replace('~', '-'), `rigd ${VERSION}`);
    for (const [f, hash] of secrets) t.equal(sha(root, f), hash, `/${f} unchanged`);
    t.match(readFileSync(root.file('etc/rigd/config.yaml'), 'utf8'), /online_after_s: 240/, 'the edited config is kept');
    const after = await serve(root);
    t.equal((await login(after.port, 'ben')).status, 200, 'the user from before logs in');
    t.equal((await report(net, after.port, 'rig-new')).status, 200, 'a rig reports');
    t.deepEqual(rigIds(root).sort(), ['rig-new', 'rig-old'], 'the rig from before is still there');
    t.equal(await after.stop(), 0, 'stopped');
    t.equal(apt('purge', 'rigd').code, 0, 'apt purge rigd');
    t.end();
  });

  test(`${name}: teardown`, async (t) => {
    await net?.destroy();
    root?.destroy();
    root = null;
    t.end();
  });
}
