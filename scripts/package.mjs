#!/usr/bin/env node
// Builds the Debian package rigd_VERSION_ARCH.deb from the built tree (npm run package builds
// first): dist/, bin/, templates/, public/, a trimmed package.json and the production dependencies
// copied from node_modules under /usr/lib/rigd, and the Node runtime package.json pins under
// /usr/lib/rigd/node (scripts/package/runtime.mjs). Usage:
//   node scripts/package.mjs [--arch amd64|arm64] [--out DIR] [--version VERSION] [--fast]
// --arch: default this machine's; arm64 on amd64 cross-compiles sqlite3 (crossbuild-essential-arm64).
// --out: default the project root. --version: another version than package.json's (a test's
// previous release). --fast: gzip -1 instead of xz (the same files in a larger package, in seconds
// instead of minutes: for tests). The runtime and the cross-built addon are cached in node_modules/.cache/rigd-package
// (RIGD_PACKAGE_CACHE). Prints the path of the package on stdout.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { archInfo, hostArch } from './package/arch.mjs';
import { checkArch } from './package/check.mjs';
import { productionClosure, copyPackage } from './package/closure.mjs';
import { buildDeb, walkFiles } from './package/deb.mjs';
import { installDocs } from './package/docs.mjs';
import { fail, PackageError } from './package/fail.mjs';
import { nativeAddons } from './package/native.mjs';
import { fetchRuntime } from './package/runtime.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIB = 'usr/lib/rigd';
/** The runtime, off the PATH: /usr/bin/rigd (bin/rigd's #! line), the unit and the maintainer scripts use it. */
export const NODE = `/${LIB}/node/bin/node`;
const EXEC_START = `ExecStart=${NODE} --max-semi-space-size=32 /${LIB}/bin/rigd serve`;
const UNIT = 'lib/systemd/system/rigd.service';
const CONFFILE = 'etc/rigd/config.yaml';
const TEMPLATE = 'usr/share/rigd/config.yaml';

function args(argv) {
  const out = { out: root, arch: hostArch(), version: null, fast: false };
  const usage = 'usage: node scripts/package.mjs [--arch amd64|arm64] [--out DIR] [--version VERSION] [--fast]';
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === '--fast') out.fast = true;
    else if (argv[i] === '--out' && value) out.out = path.resolve(argv[++i]);
    else if (argv[i] === '--arch' && value) out.arch = argv[++i];
    else if (argv[i] === '--version' && /^\d+\.\d+\.\d+([-~][0-9A-Za-z.]+)?$/.test(value ?? '')) out.version = argv[++i];
    else fail(`unknown or incomplete argument ${argv[i]} (${usage})`);
  }
  if (!out.arch) fail(`no --arch given and this machine (${process.arch}) is neither amd64 nor arm64`);
  return out;
}

/**
 * Everything root:root (dpkg-deb --root-owner-group); directories 0755, the runtime and bin/rigd
 * 0755, every other file 0644: the command-line scripts of dependencies (semver, uuid, ...) are
 * never run on the gateway, so they are not executable there.
 */
function normaliseModes(dir, executables) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      chmodSync(p, 0o755);
      normaliseModes(p, executables);
    } else chmodSync(p, executables.has(p) ? 0o755 : 0o644);
  }
}

/** Strips as dh_strip does: no debug symbols on the gateway (the dynamic symbols addons link to stay). */
function strip(target, file, shared) {
  const res = spawnSync(target.strip, ['--remove-section=.comment', '--remove-section=.note', ...(shared ? ['--strip-unneeded'] : []), file], { encoding: 'utf8' });
  if (res.status !== 0) fail(`${target.strip} ${path.basename(file)}: ${(res.stderr || res.error?.message || '').trim()} (apt-get install binutils${target.native ? '' : `-${target.triplet}`})`);
}

/** The commit's time, for reproducible dates (SOURCE_DATE_EPOCH wins). */
function sourceDate() {
  if (process.env.SOURCE_DATE_EPOCH) return Number(process.env.SOURCE_DATE_EPOCH);
  const res = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' });
  const t = Number(res.stdout?.trim());
  return Number.isFinite(t) && t > 0 ? t : Math.floor(Date.now() / 1000);
}

/** dist/, bin/, templates/, public/: no source maps; bin/rigd runs on the bundled runtime. */
function copyProgram(lib) {
  for (const dir of ['dist', 'bin', 'templates', 'public']) {
    cpSync(path.join(root, dir), path.join(lib, dir), { recursive: true, dereference: true, filter: (f) => !f.endsWith('.map') });
  }
  for (const f of walkFiles(path.join(lib, 'dist')).filter((f) => /\.[cm]?js$/.test(f))) {
    const file = path.join(lib, 'dist', f);
    const js = readFileSync(file, 'utf8');
    const bare = js.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    if (bare !== js) writeFileSync(file, bare);
  }
  const bin = path.join(lib, 'bin', 'rigd');
  const script = readFileSync(bin, 'utf8');
  if (!script.startsWith('#!/usr/bin/env node\n')) fail('bin/rigd does not start with #!/usr/bin/env node');
  writeFileSync(bin, script.replace('#!/usr/bin/env node\n', `#!${NODE}\n`));
}

function main() {
  const opts = args(process.argv.slice(2));
  const target = archInfo(opts.arch);
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  // A pre-release (1.2.0-rc.1) sorts before its release in Debian as 1.2.0~rc.1.
  const version = (opts.version ?? pkg.version).replace('-', '~');
  if (process.platform !== 'linux') fail('the package is built on Linux');
  for (const need of ['dist/cli/main.js', 'bin/rigd', 'templates', 'public']) {
    if (!existsSync(path.join(root, need))) fail(`${need} is missing: run npm run build first (npm run package does)`);
  }
  const unit = readFileSync(path.join(root, 'systemd/rigd.service'), 'utf8');
  if (!unit.split('\n').includes(EXEC_START)) fail(`systemd/rigd.service: the package needs ${EXEC_START}`);
  const maintainer = process.env.DEBEMAIL ? `${process.env.DEBFULLNAME ?? 'rigd'} <${process.env.DEBEMAIL}>` : 'rigd maintainers <rigd@rigd.invalid>';
  const epoch = sourceDate();
  const cache = process.env.RIGD_PACKAGE_CACHE || path.join(root, 'node_modules', '.cache', 'rigd-package');
  const runtime = fetchRuntime(root, cache, target.runtime);
  const addons = nativeAddons(root, cache, target, runtime);

  const stage = mkdtempSync(path.join(os.tmpdir(), 'rigd-deb-'));
  try {
    const lib = path.join(stage, LIB);
    mkdirSync(lib, { recursive: true });
    copyProgram(lib);
    const trimmed = {
      name: pkg.name, version: opts.version ?? pkg.version, description: pkg.description, private: true, type: pkg.type,
      license: pkg.license, bin: pkg.bin, dependencies: pkg.dependencies,
    };
    writeFileSync(path.join(lib, 'package.json'), `${JSON.stringify(trimmed, null, 2)}\n`);
    const keep = {
      'node_modules/sqlite3': ['package.json', 'LICENSE', 'lib'],
      'node_modules/bcrypt': ['package.json', 'LICENSE', 'bcrypt.js', 'promises.js', addons.bcrypt],
    };
    for (const dir of productionClosure(root)) copyPackage(root, dir, lib, keep[dir]);
    const sqlite3 = path.join(lib, 'node_modules/sqlite3/build/Release/node_sqlite3.node');
    mkdirSync(path.dirname(sqlite3), { recursive: true });
    cpSync(addons.sqlite3, sqlite3);
    strip(target, sqlite3, true);

    const node = path.join(stage, NODE);
    mkdirSync(path.dirname(node), { recursive: true });
    cpSync(runtime.node, node);
    cpSync(path.join(runtime.dir, 'LICENSE'), path.join(lib, 'node', 'LICENSE'));
    strip(target, node, false);

    mkdirSync(path.join(stage, 'usr/bin'), { recursive: true });
    symlinkSync('../lib/rigd/bin/rigd', path.join(stage, 'usr/bin/rigd'));
    mkdirSync(path.dirname(path.join(stage, UNIT)), { recursive: true });
    writeFileSync(path.join(stage, UNIT), unit);

    // The shipped config: the example with data_dir where the unit keeps it, so commands and the
    // service agree. postinst compares the conffile with the template to know whether it was edited.
    const example = readFileSync(path.join(root, 'config.example.yaml'), 'utf8');
    const config = example.replace(/^data_dir: .*$/m, 'data_dir: /var/lib/rigd');
    if (config === example) fail('config.example.yaml has no data_dir line');
    for (const file of [CONFFILE, TEMPLATE]) {
      mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
      writeFileSync(path.join(stage, file), config);
    }
    installDocs(root, stage, { pkg, version, maintainer, epoch });
    // Tags that follow from carrying a runtime, each explained in the file (docs/install.md too).
    const overrides = path.join(stage, 'usr/share/lintian/overrides/rigd');
    mkdirSync(path.dirname(overrides), { recursive: true });
    cpSync(path.join(root, 'packaging/deb/lintian-overrides'), overrides);

    normaliseModes(stage, new Set([node, path.join(lib, 'bin', 'rigd')]));
    chmodSync(stage, 0o755);
    checkArch(stage, target, [NODE.slice(1), path.relative(stage, sqlite3), `${LIB}/node_modules/bcrypt/${addons.bcrypt}`]);
    const deb = buildDeb(root, stage, { version, arch: target.arch, maintainer, conffiles: [CONFFILE], epoch, out: opts.out, fast: opts.fast });
    process.stdout.write(`${deb}\n`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  if (!(err instanceof PackageError)) throw err;
  process.stderr.write(`package: ${err.message}\n`);
  process.exitCode = 1;
}
