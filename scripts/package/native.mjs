// The two native addons, for the package's architecture:
// - sqlite3: on this machine's own architecture, the binary `npm ci` built; for another one,
//   compiled from the sources in node_modules/sqlite3 with node-gyp against the pinned runtime's
//   headers (--arch, --nodedir) and the cross compilers, once per sqlite3 and Node version (cached).
// - bcrypt: the Node-API prebuild it ships for linux-<cpu> (glibc).
// scripts/package/check.mjs then checks every ELF file of the package with `file`.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fail } from './fail.mjs';

function version(root, name) {
  return JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** node-gyp: npm's own (npm run sets npm_config_node_gyp), else the global npm's, else the project's. */
function nodeGyp(root) {
  const npmRoot = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout?.trim();
  const candidates = [
    process.env.npm_config_node_gyp,
    npmRoot && path.join(npmRoot, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((c) => c && existsSync(c)) ?? fail('node-gyp not found (npm ships it)');
}

function crossSqlite3(root, cache, target, runtime) {
  const out = path.join(cache, `sqlite3-${version(root, 'sqlite3')}-${target.arch}-node${runtime.version}`, 'node_sqlite3.node');
  if (existsSync(out)) return out;
  if (spawnSync('sh', ['-c', `command -v ${target.cc} && command -v ${target.cxx}`]).status !== 0) {
    fail(`${target.cc} / ${target.cxx} not found: apt-get install crossbuild-essential-${target.arch}`);
  }
  const src = path.join(cache, `sqlite3-${target.arch}.build`);
  rmSync(src, { recursive: true, force: true });
  cpSync(path.join(root, 'node_modules', 'sqlite3'), src, {
    recursive: true,
    filter: (from) => !['build', 'node_modules'].includes(path.relative(path.join(root, 'node_modules', 'sqlite3'), from)),
  });
  process.stderr.write(`package: compiling sqlite3 for ${target.arch} (a minute or two)\n`);
  const res = spawnSync(process.execPath, [nodeGyp(root), 'rebuild', `--arch=${target.npmCpu}`, `--nodedir=${runtime.dir}`, '--jobs=2'], {
    cwd: src,
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    env: {
      ...process.env,
      // binding.gyp asks node for node-addon-api's include path.
      NODE_PATH: path.join(root, 'node_modules'),
      CC: target.cc,
      CXX: target.cxx,
      LINK: target.cxx,
      AR: target.ar,
    },
  });
  const built = path.join(src, 'build', 'Release', 'node_sqlite3.node');
  if (res.status !== 0 || !existsSync(built)) {
    fail(`node-gyp could not build sqlite3 for ${target.arch}:\n${`${res.stdout}\n${res.stderr}`.trim().split('\n').slice(-15).join('\n')}`);
  }
  mkdirSync(path.dirname(out), { recursive: true });
  renameSync(built, `${out}.tmp`);
  renameSync(`${out}.tmp`, out);
  rmSync(src, { recursive: true, force: true });
  return out;
}

/** { sqlite3: the node_sqlite3.node to ship, bcrypt: the prebuild to keep, relative to node_modules/bcrypt }. */
export function nativeAddons(root, cache, target, runtime) {
  let sqlite3;
  if (target.native) {
    sqlite3 = path.join(root, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
    if (!existsSync(sqlite3)) fail('node_modules/sqlite3 has no build/Release/node_sqlite3.node: run npm ci (or npm rebuild sqlite3)');
  } else {
    sqlite3 = crossSqlite3(root, cache, target, runtime);
  }
  const bcrypt = `prebuilds/linux-${target.npmCpu}/bcrypt.glibc.node`;
  if (!existsSync(path.join(root, 'node_modules', 'bcrypt', bcrypt))) fail(`bcrypt ${version(root, 'bcrypt')} ships no ${bcrypt}`);
  return { sqlite3, bcrypt };
}
