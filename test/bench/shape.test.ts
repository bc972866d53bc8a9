// Every bench measures rigd as operators run it: `bin/rigd serve` (or the CLI) as a process of its
// own, never rigd's server, services or ingestion loaded into the bench's process. The guard reads
// every file under bench/ (imports as the TypeScript compiler's pre-processor sees them: static,
// type-only, re-exports, literal import()) and fails on one that reaches src/server/, src/services/
// or src/ingest/. Seeding helpers of src/db and src/config (and src/storage's puts) stay allowed.
// Engine-free: it runs no database.
import test from 'tape';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/cli.ts';

const FORBIDDEN = ['src/server/', 'src/services/', 'src/ingest/'];

/** The specifiers of `source` (a file at `file`, relative to ROOT) that resolve into a forbidden directory. */
function forbiddenImports(file: string, source: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((spec) => {
      if (!spec.startsWith('.')) return false;
      const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec)).split(path.sep).join('/');
      return FORBIDDEN.some((dir) => target.startsWith(dir) || `${target}/` === dir);
    });
}

function benchFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) return benchFiles(rel);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(name) ? [rel] : [];
  });
}

test('the guard: samples of what it refuses and what it lets through', (t) => {
  const refused: [string, string][] = [
    ['bench/x.ts', "import { createServer } from '../src/server/server.ts';"],
    ['bench/x.ts', "import { openApp } from '../src/services/app.ts';"],
    ['bench/x.ts', "import { importCapture } from '../src/ingest/import.ts';"],
    ['bench/x.ts', "import type { App } from '../src/services/app.ts';"],
    ['bench/x.ts', "export { rigAvailability } from '../src/services/rigs/availability.ts';"],
    ['bench/x.ts', "const { createServer } = await import('../src/server/server.ts');"],
    ['bench/serve/x.ts', "import { fleetSummary } from '../../src/services/rigs/fleet.ts';"],
    ['bench/x.ts', "import routes from '../src/server';"],
    ['bench/x.ts', "import { x } from './../src/./ingest/../ingest/ingester.ts';"],
  ];
  for (const [file, source] of refused) t.equal(forbiddenImports(file, source).length, 1, `refused: ${source} (in ${file})`);
  const allowed: [string, string][] = [
    ['bench/x.ts', "import { DB_FILE } from '../src/db/file.ts';"],
    ['bench/x.ts', "import { loadConfig } from '../src/config/load.ts';"],
    ['bench/x.ts', "import { EmbeddedStorage } from '../src/storage/embedded.ts';"],
    ['bench/x.ts', "import { createHosts } from '../test/helpers/netns.ts';"],
    ['bench/serve/x.ts', "import { loadRun } from '../tail/run.ts';"],
    ['bench/x.ts', "import Hapi from '@hapi/hapi';"],
    ['bench/x.ts', "// import { openApp } from '../src/services/app.ts';"],
    ['bench/x.ts', "import { x } from '../src/servers-of-another-kind/x.ts';"],
  ];
  for (const [file, source] of allowed) t.deepEqual(forbiddenImports(file, source), [], `allowed: ${source} (in ${file})`);
  t.end();
});

test('no bench loads rigd into its own process (src/server, src/services, src/ingest)', (t) => {
  const files = benchFiles('bench');
  for (const name of ['map.ts', 'login-storm.ts', 'uploads.ts', 'fleet.ts', 'ingest.ts', 'capture-import-e2e.ts', 'report-tail.ts']) {
    t.ok(files.includes(`bench/${name}`), `bench/${name} is among the ${files.length} files read`);
  }
  for (const file of files) {
    const bad = forbiddenImports(file, readFileSync(path.join(ROOT, file), 'utf8'));
    t.deepEqual(bad, [], `${file}: ${bad.length ? `imports ${bad.join(', ')}: start bin/rigd serve instead (bench/serve/rigd.ts)` : 'nothing of rigd in process'}`);
  }
  t.end();
});
