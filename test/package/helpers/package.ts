// Builds a Debian package of this tree with scripts/package.mjs (--fast: the same files, gzip -1)
// into a directory: for the running architecture or another, as this version or an older one.
// A build is kept (RIGD_TEST_PACKAGE_CACHE, default /tmp/rigd-package-test-cache) under the digest
// of everything that goes into it, so the test files of a run, and the SQLite and PostgreSQL runs
// of the suite, build each package once; any change to the inputs builds it again.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../helpers/cli.ts';

const CACHE = process.env.RIGD_TEST_PACKAGE_CACHE || path.join(os.tmpdir(), 'rigd-package-test-cache');
/** What the package is made of (node_modules through the lockfile and the built sqlite3). */
const INPUTS = ['dist', 'bin', 'templates', 'public', 'scripts/package.mjs', 'scripts/package', 'packaging', 'systemd', 'config.example.yaml', 'README.md', 'CHANGELOG.md', 'docs', 'package.json', 'package-lock.json', 'node_modules/sqlite3/build/Release/node_sqlite3.node'];

export interface Built {
  deb: string | null;
  /** What the build printed on stderr (its reason when deb is null). */
  stderr: string;
  /** The cache directory of this build: results derived from the package alone can be kept there. */
  cacheDir: string | null;
}

function digest(extra: string): string {
  const hash = createHash('sha256').update(extra);
  const add = (p: string) => {
    const full = path.join(ROOT, p);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) for (const name of readdirSync(full).sort()) add(path.join(p, name));
    else hash.update(`${p}\0`).update(readFileSync(full));
  };
  for (const p of INPUTS) add(p);
  return hash.digest('hex').slice(0, 24);
}

export function buildPackage(out: string, opts: { arch?: 'amd64' | 'arm64'; version?: string } = {}): Built {
  const args = ['--fast'];
  if (opts.arch) args.push('--arch', opts.arch);
  if (opts.version) args.push('--version', opts.version);
  const dir = path.join(CACHE, digest(args.join(' ')));
  const cached = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.deb')) : undefined;
  if (cached) {
    copyFileSync(path.join(dir, cached), path.join(out, cached));
    return { deb: path.join(out, cached), stderr: '', cacheDir: dir };
  }
  const tmp = `${dir}.${process.pid}.tmp`;
  mkdirSync(tmp, { recursive: true });
  const res = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'package.mjs'), '--out', tmp, ...args], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 1_800_000 });
  const stderr = `${res.stderr ?? ''}${res.error ? res.error.message : ''}`.trim();
  if (res.status !== 0) return { deb: null, stderr, cacheDir: null };
  const name = path.basename(res.stdout.trim());
  spawnSync('rm', ['-rf', dir]);
  renameSync(tmp, dir);
  copyFileSync(path.join(dir, name), path.join(out, name));
  return { deb: path.join(out, name), stderr, cacheDir: dir };
}
