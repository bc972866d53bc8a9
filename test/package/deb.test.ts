// `npm run package`'s Debian package, built into a temp dir: control fields, file list, modes,
// conffile, maintainer scripts, the unit, lintian when installed, and the closure's completeness:
// the extracted tree runs `rigd --version`, adds and lists a user, and serves, with the system's node.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ENV_FILE } from '../../src/config/env-file.ts';
import { loadConfig } from '../../src/config/load.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const out = tmpDir('rigd-deb-');
const DEB = path.join(out, `rigd_${VERSION.replace('-', '~')}_amd64.deb`);

function sh(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeout?: number } = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, timeout: opts.timeout ?? 120_000, env: opts.env, input: opts.input });
}

interface Entry {
  mode: string;
  owner: string;
  path: string;
  target?: string;
}

let entries: Entry[] = [];
const entry = (p: string) => entries.find((e) => e.path === p);

test('scripts/package.mjs builds rigd_VERSION_amd64.deb', (t) => {
  const res = sh(process.execPath, [path.join(ROOT, 'scripts', 'package.mjs'), '--out', out], { timeout: 600_000 });
  t.equal(res.status, 0, `package builds (${res.stderr.trim() || 'no errors'})`);
  t.equal(res.stdout.trim(), DEB, 'prints the path of the package');
  const list = sh('dpkg-deb', ['-c', DEB]);
  t.equal(list.status, 0, 'dpkg-deb -c reads it');
  entries = list.stdout.split('\n').filter(Boolean).map((line) => {
    const m = /^(\S+)\s+(\S+)\s+\d+\s+\S+\s+\S+\s+\.\/(.*?)(?: -> (.*))?$/.exec(line);
    if (!m) throw new Error(`unexpected dpkg-deb -c line: ${line}`);
    return { mode: m[1], owner: m[2], path: `/${m[3]}`.replace(/\/$/, '') || '/', target: m[4] };
  });
  t.ok(entries.length > 100, `${entries.length} entries`);
  t.end();
});

test('control fields', (t) => {
  const field = (name: string) => sh('dpkg-deb', ['-f', DEB, name]).stdout.trim();
  t.equal(field('Package'), 'rigd');
  t.equal(field('Version'), VERSION.replace('-', '~'), 'version of package.json');
  t.equal(field('Architecture'), 'amd64');
  t.ok(field('Depends').split(/,\s*/).includes('nodejs (>= 20.18)'), `Depends: ${field('Depends')}`);
  t.ok(field('Depends').split(/,\s*/).includes('adduser'), 'adduser (postinst makes the system user)');
  t.match(field('Maintainer'), /^.+ <[^@\s]+@[^@\s]+>$/, 'Maintainer is a name and an address');
  t.ok(Number(field('Installed-Size')) > 1000, `Installed-Size ${field('Installed-Size')} KiB`);
  t.match(field('Description'), /^\S.+\n \S/, 'a synopsis and a long description');
  t.end();
});

test('file list: the program under /usr/lib/rigd, the command, the unit, the conffile; no dev tools or tests', (t) => {
  const rigd = entry('/usr/bin/rigd');
  t.ok(rigd?.mode.startsWith('l') && rigd.target === '../lib/rigd/bin/rigd', '/usr/bin/rigd -> ../lib/rigd/bin/rigd');
  t.equal(entry('/usr/lib/rigd/bin/rigd')?.mode, '-rwxr-xr-x', 'the entry point is executable');
  for (const p of [
    '/usr/lib/rigd/dist/cli/main.js',
    '/usr/lib/rigd/dist/config/load.js',
    '/usr/lib/rigd/package.json',
    '/usr/lib/rigd/templates/rigs.hbs',
    '/usr/lib/rigd/public/rigs.css',
    '/usr/lib/rigd/node_modules/@hapi/hapi/package.json',
    '/usr/lib/rigd/node_modules/sqlite3/build/Release/node_sqlite3.node',
    '/usr/lib/rigd/node_modules/bcrypt/prebuilds/linux-x64/bcrypt.glibc.node',
    '/usr/share/doc/rigd/copyright',
    '/usr/share/man/man1/rigd.1.gz',
  ]) {
    t.ok(entry(p), p);
  }
  t.equal(entry('/lib/systemd/system/rigd.service')?.mode, '-rw-r--r--', 'the unit, 0644');
  t.equal(entry('/etc/rigd/config.yaml')?.mode, '-rw-r--r--', 'the conffile (postinst makes it root:rigd 0640)');
  t.notOk(entries.some((e) => e.path.startsWith('/var/')), 'nothing under /var: postinst makes /var/lib/rigd');

  const devTools = /\/node_modules\/(typescript|tsx|esbuild|@esbuild|tape|@types|playwright-core|s3rver|autocannon|ink-testing-library|node-gyp)(\/|$)/;
  t.deepEqual(entries.filter((e) => devTools.test(e.path)).map((e) => e.path).slice(0, 5), [], 'no TypeScript, tsx, esbuild, tape, types or build tools');
  t.deepEqual(entries.filter((e) => /\.(d\.)?[cm]?tsx?$/.test(e.path)).map((e) => e.path).slice(0, 5), [], 'no .ts files at all');
  t.notOk(entries.some((e) => /^\/usr\/lib\/rigd\/(test|src|bench|scripts|packaging)(\/|$)/.test(e.path)), 'no tests, sources, benchmarks or scripts of rigd');
  t.deepEqual(entries.filter((e) => e.owner !== 'root/root').map((e) => e.path).slice(0, 5), [], 'everything root/root');
  t.deepEqual(entries.filter((e) => !e.mode.startsWith('l') && /^.....w|^........w/.test(e.mode)).map((e) => e.path).slice(0, 5), [], 'nothing group- or world-writable');
  t.end();
});

test('control area: conffiles, maintainer scripts (executable, sh -n clean, the ones in packaging/deb)', (t) => {
  const control = path.join(out, 'control');
  t.equal(sh('dpkg-deb', ['-e', DEB, control]).status, 0, 'dpkg-deb -e');
  t.equal(readFileSync(path.join(control, 'conffiles'), 'utf8'), '/etc/rigd/config.yaml\n', 'conffiles: /etc/rigd/config.yaml');
  for (const script of ['postinst', 'prerm', 'postrm']) {
    const file = path.join(control, script);
    t.equal(statSync(file).mode & 0o777, 0o755, `${script} 0755`);
    t.equal(sh('sh', ['-n', file]).status, 0, `${script}: sh -n clean`);
    t.equal(readFileSync(file, 'utf8'), readFileSync(path.join(ROOT, 'packaging', 'deb', script), 'utf8'), `${script} is packaging/deb/${script}`);
  }
  t.ok(readFileSync(path.join(control, 'md5sums'), 'utf8').includes(' usr/lib/rigd/bin/rigd\n'), 'md5sums');
  t.end();
});

test('extracted: unit and config fit the package paths; the closure runs with the system node', async (t) => {
  const x = path.join(out, 'x');
  mkdirSync(x);
  t.equal(sh('dpkg-deb', ['-x', DEB, x]).status, 0, 'dpkg-deb -x');

  const unitFile = path.join(x, 'lib/systemd/system/rigd.service');
  const unit = readFileSync(unitFile, 'utf8').split('\n');
  t.ok(unit.includes('ExecStart=/usr/bin/node --max-semi-space-size=32 /usr/lib/rigd/bin/rigd serve'), 'ExecStart runs /usr/lib/rigd/bin/rigd');
  t.ok(unit.includes(`EnvironmentFile=-${ENV_FILE}`), `EnvironmentFile=-${ENV_FILE}, the file commands read too`);
  t.ok(unit.includes('User=rigd') && unit.includes('Environment=RIGD_DATA_DIR=/var/lib/rigd'), 'runs as rigd on /var/lib/rigd');
  const verify = sh('systemd-analyze', ['verify', unitFile]);
  t.equal(verify.status, 0, `systemd-analyze verify: ${verify.stderr.trim() || 'clean'}`);

  const conf = path.join(x, 'etc/rigd/config.yaml');
  t.equal(readFileSync(conf, 'utf8'), readFileSync(path.join(x, 'usr/share/rigd/config.yaml'), 'utf8'), 'the template postinst compares with is the conffile as shipped');
  const { config } = loadConfig({ file: conf, env: { RIGD_ENV_FILE: '' } });
  t.equal(config.data_dir, '/var/lib/rigd', 'the shipped config is valid and names the unit\'s data_dir');

  // Only the extracted tree: no NODE_PATH, and nothing above /tmp holds node_modules.
  const env = { PATH: '/usr/bin:/bin', HOME: out, RIGD_ENV_FILE: '', RIGD_DATA_DIR: path.join(out, 'data'), RIGD_AUTH_BCRYPT_COST: '4', RIGD_LOG_LEVEL: 'warn' };
  const rigd = path.join(x, 'usr/bin/rigd');
  const version = sh(rigd, ['--version'], { env });
  t.equal(version.stdout.trim(), VERSION, `usr/bin/rigd --version (${version.stderr.trim() || 'ok'})`);
  const add = sh(rigd, ['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password' });
  t.equal(add.status, 0, `user add: sqlite3, Sequelize and bcrypt load (${add.stderr.trim() || 'ok'})`);
  const list = sh(rigd, ['user', 'list', '--json'], { env });
  t.deepEqual((JSON.parse(list.stdout || '[]') as { username: string }[]).map((u) => u.username), ['ana'], 'user list --json');

  const serve = spawn(rigd, ['serve', '--port', '0', '--host', '127.0.0.1'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listening = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 60_000);
    const onData = (d: Buffer) => {
      output += d;
      if (/rigd listening on http:\/\/\S+/.test(output)) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    serve.stdout.on('data', onData);
    serve.stderr.on('data', onData);
    serve.on('exit', () => resolve(false));
  });
  t.ok(listening, `serve starts from the package (${output.trim().split('\n')[0] ?? ''})`);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    if (serve.exitCode !== null) resolve([serve.exitCode, null]);
    serve.on('exit', (c, sig) => resolve([c, sig]));
    serve.kill('SIGTERM');
  });
  t.equal(code, 0, `and stops cleanly on SIGTERM${code === 0 ? '' : ` (signal ${signal}; it printed: ${output.slice(-2000)})`}`);
  t.end();
});

test('lintian: no errors', (t) => {
  if (sh('sh', ['-c', 'command -v lintian']).status !== 0) {
    // Fail rather than pass without having checked the package.
    t.fail('lintian is not installed (apt-get install lintian): the package was not checked');
    t.end();
    return;
  }
  // A Node appliance ships its own npm closure, so Debian's "use the packaged libjs-*" advice does not apply.
  const res = sh('lintian', ['--tag-display-limit', '0', '--suppress-tags', 'embedded-javascript-library', DEB], { timeout: 600_000 });
  const tags = res.stdout.split('\n').filter((l) => /^[EW]: /.test(l));
  t.deepEqual(tags.filter((l) => l.startsWith('E: ')), [], 'no lintian errors');
  t.deepEqual(tags.filter((l) => l.startsWith('W: ')), [], 'no lintian warnings');
  t.end();
});

