// test: alone (package build)
// `npm run package`'s Debian package, built into a temp dir: control fields, file list, modes,
// conffile, maintainer scripts, the unit, lintian, and the closure's completeness: the extracted
// tree runs `rigd --version`, adds and lists a user, and serves, on the Node runtime it carries
// (a `node` on PATH that refuses to run proves the system's is never used).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ENV_FILE } from '../../src/config/env-file.ts';
import { loadConfig } from '../../src/config/load.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { buildPackage } from './helpers/package.ts';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const out = tmpDir('rigd-deb-');
const DEB = path.join(out, `rigd_${VERSION.replace('-', '~')}_amd64.deb`);
/** The runtime the package carries, off the PATH. */
const NODE = '/usr/lib/rigd/node/bin/node';
const EXEC_START = `ExecStart=${NODE} --max-semi-space-size=32 /usr/lib/rigd/bin/rigd serve`;
/** The manual pages npm run build generates (rigd.1 has a stand-in in packaging/deb until then). */
const MAN5 = existsSync(path.join(ROOT, 'dist', 'man', 'rigd.yaml.5'));

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
let cacheDir: string | null = null;
const entry = (p: string) => entries.find((e) => e.path === p);

test('scripts/package.mjs builds rigd_VERSION_amd64.deb', (t) => {
  const built = buildPackage(out);
  cacheDir = built.cacheDir;
  t.equal(built.deb, DEB, `package builds (${built.stderr || 'no errors'})`);
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
  t.notOk(/\bnodejs\b/.test(field('Depends')), `Depends names no nodejs: ${field('Depends')}`);
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
  t.equal(entry(NODE)?.mode, '-rwxr-xr-x', `the runtime: ${NODE}`);
  t.notOk(entries.some((e) => /^\/usr\/(local\/)?s?bin\/node/.test(e.path)), 'no node on the PATH');
  for (const p of [
    '/usr/lib/rigd/dist/cli/main.js',
    '/usr/lib/rigd/dist/config/load.js',
    '/usr/lib/rigd/package.json',
    '/usr/lib/rigd/templates/rigs.hbs',
    '/usr/lib/rigd/public/rigs.css',
    '/usr/lib/rigd/node_modules/@hapi/hapi/package.json',
    '/usr/lib/rigd/node_modules/sqlite3/build/Release/node_sqlite3.node',
    '/usr/lib/rigd/node_modules/bcrypt/prebuilds/linux-x64/bcrypt.glibc.node',
    '/usr/lib/rigd/node/LICENSE',
    '/usr/share/doc/rigd/copyright',
    '/usr/share/doc/rigd/changelog.gz',
    '/usr/share/doc/rigd/README.md.gz',
    '/usr/share/doc/rigd/docs/install.md.gz',
    '/usr/share/man/man1/rigd.1.gz',
    ...(MAN5 ? ['/usr/share/man/man5/rigd.yaml.5.gz'] : []),
  ]) {
    t.ok(entry(p), p);
  }
  t.equal(entry('/lib/systemd/system/rigd.service')?.mode, '-rw-r--r--', 'the unit, 0644');
  t.equal(entry('/etc/rigd/config.yaml')?.mode, '-rw-r--r--', 'the conffile (postinst makes it root:rigd 0640)');
  t.notOk(entries.some((e) => e.path.startsWith('/var/')), 'nothing under /var: postinst makes /var/lib/rigd');

  const devTools = /\/node_modules\/(typescript|tsx|esbuild|@esbuild|tape|@types|playwright-core|s3rver|autocannon|ink-testing-library|node-gyp)(\/|$)/;
  t.deepEqual(entries.filter((e) => devTools.test(e.path)).map((e) => e.path).slice(0, 5), [], 'no TypeScript, tsx, esbuild, tape, types or build tools');
  t.deepEqual(entries.filter((e) => /\.(d\.)?[cm]?tsx?$/.test(e.path)).map((e) => e.path).slice(0, 5), [], 'no .ts files at all');
  t.deepEqual(entries.filter((e) => e.path.endsWith('.map')).map((e) => e.path).slice(0, 5), [], 'no source maps');
  t.deepEqual(entries.filter((e) => /\.test\.[cm]?[jt]sx?$/.test(e.path)).map((e) => e.path).slice(0, 5), [], 'no test files');
  t.notOk(entries.some((e) => e.path.startsWith('/usr/lib/rigd/node/include')), 'no Node headers (only the build needs them)');
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
  for (const script of ['postinst', 'prerm', 'postrm']) {
    // A maintainer script that needs Node runs the package's (and through /usr/bin/rigd), never the system's.
    const calls = readFileSync(path.join(control, script), 'utf8').split('\n').filter((l) => !/^\s*#/.test(l) && /(^|[\s;&|(`])(\/usr\/bin\/)?(node|nodejs|npm|npx)(\s|$)/.test(l));
    t.deepEqual(calls, [], `${script} calls no system node or npm`);
  }
  t.end();
});

test('extracted: unit and config fit the package paths; the closure runs with the system node', async (t) => {
  const x = path.join(out, 'x');
  mkdirSync(x);
  t.equal(sh('dpkg-deb', ['-x', DEB, x]).status, 0, 'dpkg-deb -x');

  const unitFile = path.join(x, 'lib/systemd/system/rigd.service');
  const unit = readFileSync(unitFile, 'utf8').split('\n');
  t.ok(unit.includes(EXEC_START), `${EXEC_START} (the runtime the package carries)`);
  t.ok(unit.includes('Documentation=man:rigd(1) man:rigd.yaml(5)'), 'Documentation: the manual pages');
  t.ok(unit.includes(`EnvironmentFile=-${ENV_FILE}`), `EnvironmentFile=-${ENV_FILE}, the file commands read too`);
  t.ok(unit.includes('User=rigd') && unit.includes('Environment=RIGD_DATA_DIR=/var/lib/rigd'), 'runs as rigd on /var/lib/rigd');
  // verify checks that ExecStart exists (the extracted runtime stands at its path) and, with the
  // package's manual pages on MANPATH, that the pages Documentation= names are there.
  const localUnit = path.join(out, 'rigd.service');
  writeFileSync(localUnit, readFileSync(unitFile, 'utf8').replaceAll('/usr/lib/rigd/', `${x}/usr/lib/rigd/`));
  const verify = sh('systemd-analyze', ['verify', `--man=${MAN5 ? 'yes' : 'no'}`, localUnit], { env: { ...process.env, MANPATH: path.join(x, 'usr/share/man') } });
  t.equal(verify.status, 0, `systemd-analyze verify: ${verify.stderr.trim() || 'clean'}`);
  t.equal(readFileSync(path.join(x, 'usr/lib/rigd/bin/rigd'), 'utf8').split('\n')[0], `#!${NODE}`, `/usr/bin/rigd runs on ${NODE}`);
  const kind = sh('file', ['-b', path.join(x, NODE)]);
  t.match(kind.stdout, /^ELF 64-bit LSB .*x86-64/, `the runtime is an amd64 binary (${kind.stdout.trim().slice(0, 60)})`);

  const conf = path.join(x, 'etc/rigd/config.yaml');
  t.equal(readFileSync(conf, 'utf8'), readFileSync(path.join(x, 'usr/share/rigd/config.yaml'), 'utf8'), 'the template postinst compares with is the conffile as shipped');
  const { config } = loadConfig({ file: conf, env: { RIGD_ENV_FILE: '' } });
  t.equal(config.data_dir, '/var/lib/rigd', 'the shipped config is valid and names the unit\'s data_dir');

  // Only the extracted tree and its runtime: no NODE_PATH, nothing above /tmp holds node_modules, and
  // the `node` first on PATH refuses to run (anything that reached for the system's would fail).
  const decoy = path.join(out, 'decoy');
  mkdirSync(decoy);
  writeFileSync(path.join(decoy, 'node'), '#!/bin/sh\necho "the system node was used: $*" >&2\nexit 97\n');
  chmodSync(path.join(decoy, 'node'), 0o755);
  const env = { PATH: `${decoy}:/usr/bin:/bin`, HOME: out, RIGD_ENV_FILE: '', RIGD_DATA_DIR: path.join(out, 'data'), RIGD_AUTH_BCRYPT_COST: '4', RIGD_LOG_LEVEL: 'warn' };
  // bin/rigd's #! line names /usr/lib/rigd/node/bin/node, which is not there outside a real install.
  const rigdBin = path.join(x, 'usr/lib/rigd/bin/rigd');
  const rigd = (args: string[], opts: { input?: string } = {}) => sh(path.join(x, NODE), [rigdBin, ...args], { env, ...opts });
  const version = rigd(['--version']);
  t.equal(version.stdout.trim(), VERSION, `usr/bin/rigd --version (${version.stderr.trim() || 'ok'})`);
  const add = rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { input: 'first-password' });
  t.equal(add.status, 0, `user add: sqlite3, Sequelize and bcrypt load (${add.stderr.trim() || 'ok'})`);
  const list = rigd(['user', 'list', '--json']);
  t.deepEqual((JSON.parse(list.stdout || '[]') as { username: string }[]).map((u) => u.username), ['ana'], 'user list --json');

  const serve = spawn(path.join(x, NODE), [rigdBin, 'serve', '--port', '0', '--host', '127.0.0.1'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  // Only the tags packaging/deb/lintian-overrides explains (a runtime and an npm closure carried
  // along) are overridden; the package ships that file, so lintian reads it from there.
  t.ok(entry('/usr/share/lintian/overrides/rigd'), 'the package carries its lintian overrides');
  // lintian reads only the package: its report on these very bytes is kept with the cached build
  // (the SQLite and PostgreSQL runs of the suite check the same package).
  const kept = cacheDir ? path.join(cacheDir, 'lintian.out') : null;
  let report = kept && existsSync(kept) ? readFileSync(kept, 'utf8') : null;
  if (report === null) {
    const res = sh('lintian', ['--tag-display-limit', '0', DEB], { timeout: 1_800_000 });
    t.ok(res.status !== null && !res.error, `lintian ran (exit ${res.status}${res.error ? `: ${res.error.message}` : ''})`);
    report = res.stdout;
    if (kept && !res.error && res.status !== null) writeFileSync(kept, report);
  }
  const tags = report.split('\n').filter((l) => /^[EW]: /.test(l));
  t.deepEqual(tags.filter((l) => l.startsWith('E: ')), [], 'no lintian errors');
  t.deepEqual(tags.filter((l) => l.startsWith('W: ')), [], 'no lintian warnings');
  t.end();
});

