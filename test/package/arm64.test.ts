// test: alone (package build, qemu)
// `npm run package -- --arch arm64` on this amd64 machine: the package for arm64 gateways, with its
// own arm64 Node runtime, sqlite3 cross-compiled against that runtime's headers and bcrypt's arm64
// prebuild (every ELF file checked by `file`), run under qemu-aarch64-static with the cross
// toolchain's arm64 libraries (-L /usr/aarch64-linux-gnu): --version, migrate, user add, and a
// serve that takes a login and a rig report from a 10.144.x.x address over real sockets.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ROOT } from '../helpers/cli.ts';
import { createHosts } from '../helpers/netns.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { buildPackage } from './helpers/package.ts';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const NODE = '/usr/lib/rigd/node/bin/node';
const SYSROOT = '/usr/aarch64-linux-gnu';
const PASSWORD = 'a long enough password';
const out = tmpDir('rigd-arm64-');
const x = path.join(out, 'x');
let deb: string | null = null;

const env = { PATH: '/usr/bin:/bin', HOME: out, RIGD_ENV_FILE: '', RIGD_DATA_DIR: path.join(out, 'data'), RIGD_AUTH_BCRYPT_COST: '4', RIGD_LOG_LEVEL: 'warn' };
/** argv that runs the package's rigd on its own arm64 node, emulated. */
// serve with the semi-space flag, as the unit's ExecStart runs it: without it bin/rigd would start
// itself again by node's own path, which this amd64 host cannot run outside qemu.
const qemu = (...args: string[]) => ['-L', SYSROOT, path.join(x, NODE), ...(args[0] === 'serve' ? ['--max-semi-space-size=32'] : []), path.join(x, 'usr/lib/rigd/bin/rigd'), ...args];
function rigd(args: string[], input?: string) {
  return spawnSync('qemu-aarch64-static', qemu(...args), { encoding: 'utf8', env, input, timeout: 600_000 });
}

test('npm run package -- --arch arm64 builds rigd_VERSION_arm64.deb on amd64', (t) => {
  const built = buildPackage(out, { arch: 'arm64' });
  deb = built.deb;
  t.equal(deb, path.join(out, `rigd_${VERSION.replace('-', '~')}_arm64.deb`), `built (${built.stderr.split('\n').slice(-3).join(' / ') || 'ok'})`);
  if (!deb) return t.end();
  const field = (name: string) => spawnSync('dpkg-deb', ['-f', deb!, name], { encoding: 'utf8' }).stdout.trim();
  t.equal(field('Architecture'), 'arm64');
  t.notOk(/\bnodejs\b/.test(field('Depends')), `Depends names no nodejs: ${field('Depends')}`);
  mkdirSync(x);
  t.equal(spawnSync('dpkg-deb', ['-x', deb, x]).status, 0, 'dpkg-deb -x');
  const elves = spawnSync('sh', ['-c', `find "${x}" -type f \\( -name '*.node' -o -path '*/node/bin/node' \\) -print0 | xargs -0 file -b`], { encoding: 'utf8' }).stdout.trim().split('\n');
  t.ok(elves.length >= 3, `${elves.length} binaries: the runtime, sqlite3, bcrypt`);
  t.deepEqual(elves.filter((k) => !/ELF 64-bit LSB .*ARM aarch64/.test(k)), [], 'every one is aarch64 (file)');
  t.end();
});

test('a binary for the wrong architecture fails the build', (t) => {
  // The checker the build runs on its stage, given an amd64 runtime where arm64 is expected.
  const check = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { checkArch } from ${JSON.stringify(path.join(ROOT, 'scripts/package/check.mjs'))};
       import { archInfo } from ${JSON.stringify(path.join(ROOT, 'scripts/package/arch.mjs'))};
       import { PackageError } from ${JSON.stringify(path.join(ROOT, 'scripts/package/fail.mjs'))};
       import { cpSync, mkdtempSync } from 'node:fs';
       const stage = mkdtempSync('${out}/wrong-');
       cpSync(process.execPath, stage + '/node');
       try { checkArch(stage, archInfo('arm64'), ['node']); console.log('passed'); }
       catch (e) { if (e instanceof PackageError) console.log(e.message); else throw e; }`,
    ],
    { encoding: 'utf8' },
  );
  t.match(check.stdout, /not built for arm64:\n {2}\/node: ELF 64-bit LSB .*x86-64/, `refused: ${check.stdout.trim().split('\n').slice(0, 2).join(' / ')}`);
  t.end();
});

test('under qemu-aarch64-static: rigd --version, migrate, user add', (t) => {
  if (!deb) return t.end();
  const version = rigd(['--version']);
  t.equal(version.stdout.trim(), VERSION, `rigd --version (${version.stderr.trim() || 'ok'})`);
  const migrate = rigd(['migrate']);
  t.equal(migrate.status, 0, `rigd migrate: the arm64 sqlite3 loads (${migrate.stderr.trim() || migrate.stdout.trim().split('\n').pop()})`);
  const add = rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], PASSWORD);
  t.equal(add.status, 0, `rigd user add: the arm64 bcrypt hashes (${add.stderr.trim() || 'ok'})`);
  t.end();
});

test('under qemu-aarch64-static: rigd serve takes a login and a rig report', async (t) => {
  if (!deb) return t.end();
  const net = await createHosts([{ name: 'rig', addr: '10.144.231.2', gw: '10.144.231.1' }]);
  const serve = spawn('qemu-aarch64-static', qemu('serve', '--port', '0', '--host', '0.0.0.0'), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${output}`)), 600_000);
      const onData = (d: Buffer) => {
        output += d;
        const m = /rigd listening on http:\/\/\S+:(\d+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      serve.stdout.on('data', onData);
      serve.stderr.on('data', onData);
      serve.on('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
    });
    t.pass(`rigd serve listens on port ${port}`);
    const login = await fetch(`http://127.0.0.1:${port}/api/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ login: 'ana', password: PASSWORD }),
    });
    const session = (await login.json()) as { token?: string };
    t.equal(login.status, 200, 'POST /api/v1/sessions: 200');
    t.ok(session.token, 'a token');
    const body = new URLSearchParams({ rig_serial: 'SN-arm', gpsd_latitude: '47.37', gpsd_longitude: '8.54', local_ip: '192.168.1.2', software_version: '1.2.3', git_branch: 'main' });
    const res = await net.request('rig', {
      url: `http://${net.hosts.rig.serverAddr}:${port}/api/v1/rigs/rig-arm`,
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
      timeoutMs: 120_000,
    });
    t.equal(res.status, 200, `PUT /api/v1/rigs/rig-arm from 10.144.231.2: ${res.status}`);
    t.equal(res.body, 'Ok');
    const code = await new Promise<number | null>((resolve) => {
      serve.removeAllListeners('exit');
      serve.on('exit', (c) => resolve(c));
      serve.kill('SIGTERM');
    });
    t.equal(code, 0, 'serve stops cleanly on SIGTERM');
    const rigs = rigd(['rigs', '--json']);
    t.deepEqual((JSON.parse(rigs.stdout || '[]') as { id: string }[]).map((r) => r.id), ['rig-arm'], 'the report is stored');
  } catch (err) {
    t.fail(String(err));
  } finally {
    if (serve.exitCode === null) serve.kill('SIGKILL');
    await net.destroy();
  }
  t.end();
});
