#!/usr/bin/env node
// Builds the Debian package rigd_VERSION_amd64.deb from the built tree (npm run package builds
// first): dist/, bin/, templates/, public/, a trimmed package.json and the production dependencies,
// copied from node_modules (no network), under /usr/lib/rigd. Usage:
//   node scripts/package.mjs [--out DIR]      (default: the project root)
// Prints the path of the package on stdout.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIB = 'usr/lib/rigd';
const UNIT = 'lib/systemd/system/rigd.service';
const CONFFILE = 'etc/rigd/config.yaml';
const TEMPLATE = 'usr/share/rigd/config.yaml';
const DEPENDS = 'nodejs (>= 20.18), adduser, libc6 (>= 2.34), libgcc-s1, libstdc++6';
/** Dev tools that must never reach the gateway: the build fails if the closure holds one. */
const DEV_TOOLS = ['typescript', 'tsx', 'esbuild', '@esbuild', 'tape', 'playwright-core', 's3rver', 'autocannon'];
/** Native addons: only what loads at run time on linux-x64 (no sources, objects or other platforms). */
const KEEP = {
  sqlite3: ['package.json', 'LICENSE', 'README.md', 'lib', 'build/Release/node_sqlite3.node'],
  bcrypt: ['package.json', 'LICENSE', 'README.md', 'bcrypt.js', 'promises.js', 'prebuilds/linux-x64/bcrypt.glibc.node'],
};

/** A reason the package cannot be built: one line on stderr, exit 1 (the staging dir is removed). */
class PackageError extends Error {}
function fail(message) {
  throw new PackageError(message);
}

function args(argv) {
  const out = { out: root };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out.out = path.resolve(argv[++i]);
    else fail(`unknown argument ${argv[i]} (usage: node scripts/package.mjs [--out DIR])`);
  }
  return out;
}

/** Build tools in the production closure: sqlite3 names node-gyp to compile itself from source; the built binary ships instead. */
const BUILD_TOOLS = ['node-gyp'];

/**
 * Package directories of the production closure, relative to the project root (node_modules/...):
 * what `npm ls --omit=dev` lists, reached from the root without passing through a build tool, and
 * without type declarations (@types/*).
 */
function productionClosure() {
  const res = spawnSync('npm', ['ls', '--omit=dev', '--all', '--json', '--long'], { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 });
  let tree;
  try {
    tree = JSON.parse(res.stdout);
  } catch {
    fail(`npm ls gave no tree (${(res.stderr ?? '').trim().split('\n').pop()})`);
  }
  // Each installed package by path, with the edges of every place it appears (a deduped entry has none).
  const edges = new Map();
  const collect = (node) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (!child.path) continue; // an optional peer that is not installed
      const out = edges.get(child.path) ?? new Map();
      for (const [n, c] of Object.entries(child.dependencies ?? {})) if (c.path) out.set(c.path, n);
      edges.set(child.path, out);
      collect(child);
    }
  };
  collect(tree);
  const seen = new Set();
  const queue = Object.entries(tree.dependencies ?? {}).filter(([, c]) => c.path).map(([n, c]) => [c.path, n]);
  while (queue.length) {
    const [dir, name] = queue.pop();
    if (seen.has(dir) || BUILD_TOOLS.includes(name) || name.startsWith('@types/')) continue;
    seen.add(dir);
    for (const [p, n] of edges.get(dir) ?? []) queue.push([p, n]);
  }
  if (seen.size === 0) fail('npm ls listed no dependencies: run npm ci');
  const prefix = `${root}${path.sep}`;
  const dirs = [...seen].map((l) => (l.startsWith(prefix) ? l.slice(prefix.length) : fail(`npm ls listed ${l}, outside ${root}`))).sort();
  for (const dir of dirs) {
    const name = dir.split('node_modules/').pop();
    if (DEV_TOOLS.includes(name) || DEV_TOOLS.includes(name.split('/')[0])) fail(`the production closure holds the dev tool ${name}`);
    if (!existsSync(path.join(root, dir, 'package.json'))) fail(`${dir} is listed but not installed: run npm ci`);
  }
  return dirs;
}

/** A package's own test, example and demo directories (at its top level): never loaded. */
const UNUSED_DIRS = ['test', 'tests', '__tests__', 'example', 'examples', 'demo', 'benchmark', 'bench', 'docs'];

/**
 * Files no running rigd reads: TypeScript sources and declarations, source maps, documentation
 * (licences stay; a documentation site's HTML page at a package's top level, which loads scripts from
 * CDNs), dotfiles (lint, VCS and npm settings), and the directories above.
 */
function unused(rel, isDir) {
  const base = path.basename(rel);
  if (base.startsWith('.')) return true;
  if (isDir) return !rel.includes(path.sep) && UNUSED_DIRS.includes(base);
  if (/^(licen[cs]e|copying|notice)/i.test(base)) return false;
  if (!rel.includes(path.sep) && /\.html?$/i.test(base)) return true;
  return /\.(d\.)?[cm]?tsx?$/.test(base) || base.endsWith('.map') || /\.(md|markdown)$/i.test(base);
}

/** Copies one package without its own node_modules (nested packages are listed and copied on their own). */
function copyPackage(dir, dest) {
  const src = path.join(root, dir);
  const name = dir.split('node_modules/').pop();
  const keep = KEEP[name];
  cpSync(src, path.join(dest, dir), {
    recursive: true,
    dereference: true,
    filter: (from) => {
      const rel = path.relative(src, from);
      if (rel === '') return true;
      if (rel === 'node_modules' || rel.startsWith(`node_modules${path.sep}`) || path.basename(rel) === '.bin') return false;
      if (unused(rel, lstatSync(from).isDirectory())) return false;
      if (!keep) return true;
      return keep.some((k) => k === rel || k.startsWith(`${rel}/`) || rel.startsWith(`${k}/`));
    },
  });
  if (keep) {
    for (const k of keep) {
      if (!['LICENSE', 'README.md'].includes(k) && !existsSync(path.join(dest, dir, k))) fail(`${dir}/${k} is missing: rebuild the native addon (npm rebuild ${name})`);
    }
  }
}

function hasShebang(file) {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head.toString('latin1') === '#!';
  } finally {
    closeSync(fd);
  }
}

/** Everything root:root (dpkg-deb --root-owner-group); directories 0755, scripts (#!) 0755, other files 0644. */
function normaliseModes(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      chmodSync(p, 0o755);
      normaliseModes(p);
    } else chmodSync(p, hasShebang(p) ? 0o755 : 0o644);
  }
}

/** Strips the native addon as dh_strip would (when binutils is there): smaller, and no debug symbols on the gateway. */
function strip(file) {
  spawnSync('strip', ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', file], { stdio: 'ignore' });
}

function walkFiles(dir, base = dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) walkFiles(p, base, out);
    else if (entry.isFile()) out.push(path.relative(base, p));
  }
  return out;
}

function duKiB(dir) {
  let bytes = 0;
  for (const f of walkFiles(dir)) bytes += Math.ceil(lstatSync(path.join(dir, f)).size / 1024) * 1024;
  return Math.ceil(bytes / 1024);
}

/** The commit's time, for reproducible dates (SOURCE_DATE_EPOCH wins). */
function sourceDate() {
  if (process.env.SOURCE_DATE_EPOCH) return Number(process.env.SOURCE_DATE_EPOCH);
  const res = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' });
  const t = Number(res.stdout?.trim());
  return Number.isFinite(t) && t > 0 ? t : Math.floor(Date.now() / 1000);
}

function main() {
  const { out } = args(process.argv.slice(2));
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  // A pre-release (1.2.0-rc.1) sorts before its release in Debian as 1.2.0~rc.1.
  const version = pkg.version.replace('-', '~');
  if (process.arch !== 'x64' || process.platform !== 'linux') fail(`the native addons here are built for ${process.platform}-${process.arch}, the package is amd64`);
  for (const need of ['dist/cli/main.js', 'bin/rigd', 'templates', 'public']) {
    if (!existsSync(path.join(root, need))) fail(`${need} is missing: run npm run build first (npm run package does)`);
  }
  const maintainer = process.env.DEBEMAIL ? `${process.env.DEBFULLNAME ?? 'rigd'} <${process.env.DEBEMAIL}>` : 'rigd maintainers <rigd@rigd.invalid>';
  const epoch = sourceDate();
  const stage = mkdtempSync(path.join(os.tmpdir(), 'rigd-deb-'));
  try {
    const lib = path.join(stage, LIB);
    mkdirSync(lib, { recursive: true });
    for (const dir of ['dist', 'bin', 'templates', 'public']) cpSync(path.join(root, dir), path.join(lib, dir), { recursive: true, dereference: true });
    const trimmed = {
      name: pkg.name, version: pkg.version, description: pkg.description, private: true, type: pkg.type,
      license: pkg.license, engines: pkg.engines, bin: pkg.bin, dependencies: pkg.dependencies,
    };
    writeFileSync(path.join(lib, 'package.json'), `${JSON.stringify(trimmed, null, 2)}\n`);
    for (const dir of productionClosure()) copyPackage(dir, lib);

    mkdirSync(path.join(stage, 'usr/bin'), { recursive: true });
    symlinkSync('../lib/rigd/bin/rigd', path.join(stage, 'usr/bin/rigd'));

    const unit = readFileSync(path.join(root, 'systemd/rigd.service'), 'utf8').replaceAll('/opt/rigd/', '/usr/lib/rigd/');
    if (!unit.includes('ExecStart=/usr/bin/node --max-semi-space-size=32 /usr/lib/rigd/bin/rigd serve')) fail('systemd/rigd.service: ExecStart is not /opt/rigd/bin/rigd serve any more; adapt the package');
    mkdirSync(path.dirname(path.join(stage, UNIT)), { recursive: true });
    writeFileSync(path.join(stage, UNIT), unit);

    // The shipped config: the example with data_dir where the unit keeps it, so commands and the
    // service agree. postinst compares the conffile with the template to know whether it was edited.
    const example = readFileSync(path.join(root, 'config.example.yaml'), 'utf8');
    const config = example.replace(/^data_dir: .*$/m, 'data_dir: /var/lib/rigd');
    if (config === example) fail('config.example.yaml has no data_dir line');
    for (const target of [CONFFILE, TEMPLATE]) {
      mkdirSync(path.dirname(path.join(stage, target)), { recursive: true });
      writeFileSync(path.join(stage, target), config);
    }

    const man = path.join(stage, 'usr/share/man/man1');
    mkdirSync(man, { recursive: true });
    writeFileSync(path.join(man, 'rigd.1.gz'), gzipSync(readFileSync(path.join(root, 'packaging/deb/rigd.1')), { level: 9 }));

    const doc = path.join(stage, 'usr/share/doc/rigd');
    mkdirSync(doc, { recursive: true });
    writeFileSync(path.join(doc, 'copyright'), `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: rigd\nComment: The files under /usr/lib/rigd/node_modules carry their own licences (LICENSE files there).\n\nFiles: *\nCopyright: ${new Date(epoch * 1000).getUTCFullYear()} the rigd authors\nLicense: ${pkg.license}\n All rights reserved.\n`);
    const date = new Date(epoch * 1000).toUTCString().replace(/GMT$/, '+0000');
    const changelog = `rigd (${version}) unstable; urgency=medium\n\n  * rigd ${pkg.version}.\n\n -- ${maintainer}  ${date}\n`;
    writeFileSync(path.join(doc, 'changelog.gz'), gzipSync(changelog, { level: 9 }));

    strip(path.join(lib, 'node_modules/sqlite3/build/Release/node_sqlite3.node'));
    normaliseModes(stage);
    chmodSync(stage, 0o755);

    const debian = path.join(stage, 'DEBIAN');
    mkdirSync(debian, { mode: 0o755 });
    const files = walkFiles(stage).filter((f) => !f.startsWith('DEBIAN'));
    const md5 = files.sort().map((f) => `${createHash('md5').update(readFileSync(path.join(stage, f))).digest('hex')}  ${f}`);
    writeFileSync(path.join(debian, 'md5sums'), `${md5.join('\n')}\n`, { mode: 0o644 });
    writeFileSync(path.join(debian, 'conffiles'), `/${CONFFILE}\n`, { mode: 0o644 });
    const control = [
      'Package: rigd',
      `Version: ${version}`,
      'Architecture: amd64',
      `Maintainer: ${maintainer}`,
      `Installed-Size: ${duKiB(stage)}`,
      `Depends: ${DEPENDS}`,
      'Section: net',
      'Priority: optional',
      'Description: rig fleet service for a VPN gateway',
      ' rigd takes rig reports, hands out signed upload URLs, ingests capture',
      ' files into a capture store and gives operators a command line tool',
      ' (rigd) for users, rigs, uploads, captures and health checks.',
      ' .',
      ' The service runs as the rigd user under systemd (rigd.service); its',
      ' config is /etc/rigd/config.yaml, its secrets /etc/rigd/rigd.env and its',
      ' data /var/lib/rigd.',
    ];
    writeFileSync(path.join(debian, 'control'), `${control.join('\n')}\n`, { mode: 0o644 });
    for (const script of ['postinst', 'prerm', 'postrm']) {
      cpSync(path.join(root, 'packaging/deb', script), path.join(debian, script));
      chmodSync(path.join(debian, script), 0o755);
    }

    mkdirSync(out, { recursive: true });
    const deb = path.join(out, `rigd_${version}_amd64.deb`);
    execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z9', '--build', stage, deb], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) },
    });
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
