// No import circle in src/: a file never imports, through any chain, a file that imports it back.
// Type-only imports count (they tie the files for a reader as much as any other). The only circles
// left are the ones listed below, inside src/db; a new circle anywhere fails, and so does a listed
// one that is gone (take it off the list).
import test from 'tape';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { circles, importGraph } from '../helpers/import-graph.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Circles still in src/db, each the sorted list of its files joined by spaces. */
const KNOWN = new Set([
  'src/db/batcher.ts src/db/write-path.ts',
  'src/db/capture-store/pages.ts src/db/capture-store/pg-pages.ts',
  'src/db/capture-store/postgres-read.ts src/db/capture-store/store-reader.ts',
  [
    'src/db/dialect/bulk-insert.ts src/db/dialect/contract.ts src/db/dialect/index.ts src/db/dialect/postgres/advisory-lock.ts',
    'src/db/dialect/postgres/connection.ts src/db/dialect/postgres/index.ts src/db/dialect/postgres/insert-rows.ts',
    'src/db/dialect/postgres/json-rows.ts src/db/dialect/postgres/lite-reader.ts src/db/dialect/sqlite/connection.ts',
    'src/db/dialect/sqlite/index.ts src/db/dialect/sqlite/insert-rows.ts src/db/dialect/sqlite/json-rows.ts',
    'src/db/dialect/sqlite/lite-reader.ts src/db/migrate.ts src/db/reader.ts',
  ].join(' '),
]);

test('src/ has no import circle outside the known ones of src/db', (t) => {
  const graph = importGraph(ROOT, 'src');
  t.ok(graph.size > 100, `the walk read the tree (${graph.size} files)`);
  t.ok([...graph.values()].some((targets) => targets.size > 0), 'the walk saw imports');
  const found = circles(graph).map((c) => c.join(' '));
  t.deepEqual(found.filter((c) => !KNOWN.has(c)), [], 'no circle beyond the known ones');
  t.deepEqual([...KNOWN].filter((c) => !found.includes(c)), [], 'every known circle still stands (else take it off the list)');
  t.deepEqual(found.filter((c) => c.includes('src/services/')), [], 'none in src/services');
  t.end();
});

test('the walk finds a circle made only of type imports, through an index file', (t) => {
  const root = tmpDir();
  mkdirSync(path.join(root, 'src/rigs'), { recursive: true });
  writeFileSync(path.join(root, 'src/rigs/service.ts'), "import { view } from './queries.ts';\nexport interface View { id: string }\nexport const x = view;\n");
  writeFileSync(path.join(root, 'src/rigs/queries.ts'), "import type { View } from './index.ts';\nexport const view = (v: View) => v.id;\n");
  writeFileSync(path.join(root, 'src/rigs/index.ts'), "export * from './service.ts';\n");
  writeFileSync(path.join(root, 'src/alone.ts'), "import { x } from './rigs/service.js';\nexport const y = x;\n");
  writeFileSync(path.join(root, 'src/self.ts'), "export const z = await import('./self.ts');\n");
  t.deepEqual(circles(importGraph(root, 'src')), [
    ['src/rigs/index.ts', 'src/rigs/queries.ts', 'src/rigs/service.ts'],
    ['src/self.ts'],
  ]);
  t.end();
});
