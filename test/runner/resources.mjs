// What a test file holds that another file running at the same time must not: read from its source.
//
// - `// test: alone (why)` among its first comment lines: it runs with no other file beside it (it
//   measures time, load or memory, or bounds a latency).
// - `// test: shares NAME[, NAME...] (why)`: a fixed resource by name (`net 10.144.37` for a network
//   namespace subnet the runner cannot read, `tmux`, `etc-passwd`, `mount`, ...).
// - The network namespace subnets it uses, read from its literals: every 10.A.B.C address (or
//   10.A.B.C/24 and longer) in the file and in the test helpers it imports, when one of them is
//   test/helpers/netns.ts (createHosts). A subnet written as a template (`10.144.${n}`) cannot be
//   read: such a file must name its subnets with `shares net ...`, or it shares one name with every
//   other such file.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const MARKER = /^\/\/\s*test:\s*(alone|shares)\b\s*(.*)$/;
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
const ADDRESS = /(?<![\d.])10\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?(?![\d])/g;
const TEMPLATED = /(?<![\d.])10\.\d{1,3}\.\$\{/;

/** The marker lines among a file's leading comment lines (before its first line of code). */
export function markers(source) {
  const out = [];
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (!line.startsWith('//') && !line.startsWith('#!')) break;
    const m = MARKER.exec(line);
    if (m) out.push({ kind: m[1], rest: m[2].trim() });
  }
  return out;
}

/** `net 10.144.37, tmux (why)` -> ['net:10.144.37', 'tmux']. */
function declared(rest) {
  const names = rest.replace(/\(.*$/, '').split(',').map((s) => s.trim()).filter(Boolean);
  return names.map((n) => {
    const net = /^net\s+(10\.\d{1,3}\.\d{1,3})$/.exec(n);
    if (net) return `net:${net[1]}`;
    if (!/^[a-z0-9][a-z0-9.-]*$/.test(n)) throw new Error(`bad resource name ${JSON.stringify(n)} (lowercase words, or "net 10.A.B")`);
    return n;
  });
}

/** The file and the test files it imports (relative imports inside testRoot), each once. */
function closure(file, testRoot, cache) {
  const seen = new Set();
  const todo = [file];
  while (todo.length) {
    const f = todo.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    const src = read(f, cache);
    if (src === null) continue;
    for (const m of src.matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(f), m[1]);
      if (target.startsWith(testRoot + path.sep)) todo.push(target);
    }
  }
  return [...seen].filter((f) => read(f, cache) !== null);
}

function read(file, cache) {
  if (!cache.has(file)) {
    try {
      cache.set(file, readFileSync(file, 'utf8'));
    } catch {
      cache.set(file, null);
    }
  }
  return cache.get(file);
}

/**
 * { alone, resources, why } for one test file: resources are names ('net:10.144.7', 'tmux'); two
 * files sharing one never run at the same time.
 */
export function fileResources(file, testRoot, cache = new Map()) {
  const source = read(file, cache) ?? '';
  const found = markers(source);
  const alone = found.filter((m) => m.kind === 'alone');
  const resources = new Set(found.filter((m) => m.kind === 'shares').flatMap((m) => declared(m.rest)));
  const files = closure(file, testRoot, cache);
  const netns = path.join(testRoot, 'helpers', 'netns.ts');
  if (files.includes(netns)) {
    const declaredNet = [...resources].some((r) => r.startsWith('net:'));
    for (const f of files) {
      if (f === netns) continue;
      const src = read(f, cache);
      for (const m of src.matchAll(ADDRESS)) {
        const prefix = m[4] === undefined ? 32 : Number(m[4]);
        // A wider network (vpn.cidr 10.144.0.0/16) is data, not a namespace's subnet.
        if (prefix >= 24) resources.add(`net:10.${m[1]}.${m[2]}`);
      }
      if (!declaredNet && TEMPLATED.test(src)) resources.add('net:templated');
    }
  }
  return { alone: alone.length > 0, why: (alone[0]?.rest ?? '').replace(/^\((.*)\)$/, '$1'), resources: [...resources].sort() };
}
