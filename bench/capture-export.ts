/**
 * `rigd captures export` of a large table: time and peak RSS of the child process, for CSV and
 * NDJSON, against the export of a one-row table (the command's own footprint), and once more with
 * V8's old space capped at 16 MB (an export that held the table in memory would die there).
 *
 *   node --import tsx bench/capture-export.ts [rows]     (after npm run build; default 200000 rows)
 *
 * Seeding goes through test/helpers/seed-capture.ts (a real ingest and import), about
 * a minute for 200,000 rows of 64-byte blobs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApp } from '../src/services/app.ts';
import { seedCapture } from '../test/helpers/seed-capture.ts';
import { testConfig } from '../test/helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RIGD = path.join(ROOT, 'bin', 'rigd');
const rows = Number(process.argv[2] ?? 200_000);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rigd-bench-'));
const work = mkdtempSync(path.join(os.tmpdir(), 'rigd-bench-files-'));

const app = await openApp(testConfig({ data_dir: dataDir }));
await app.start();
const t0 = Date.UTC(2026, 10, 23, 8);
const id = await seedCapture(app, work, 'rig1/bench.sqlite', [
  {
    name: 'frames',
    columns: [
      { name: 'seq', type: 'INTEGER' },
      { name: 'taken_at', type: 'TEXT' },
      { name: 'img', type: 'BLOB' },
    ],
    rows: Array.from({ length: rows }, (_, i) => [i, new Date(t0 + i * 1000).toISOString(), Buffer.alloc(64, i % 256)]),
  },
  { name: 'meta', columns: [{ name: 'k', type: 'TEXT' }], rows: [['a']] },
]);
await app.close();

function run(label: string, table: string, format: string, nodeOptions = ''): void {
  const out = path.join(work, `${table}.${format}`);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir, NODE_OPTIONS: nodeOptions };
  const child = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, RIGD, 'captures', 'export', String(id), table, '--format', format, '-o', out], {
    env,
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`${label}: ${child.stderr}`);
  const [seconds, kb] = child.stderr.trim().split(/\s+/).slice(-2);
  console.log(`${label.padEnd(34)} ${String(statSync(out).size).padStart(11)} bytes  ${seconds} s  peak RSS ${Math.round(Number(kb) / 1024)} MB`);
}

console.log(`capture ${id}: frames with ${rows} rows`);
run('one-row table (csv)', 'meta', 'csv');
run('frames csv', 'frames', 'csv');
run('frames ndjson', 'frames', 'ndjson');
run('frames ndjson, old space 16 MB', 'frames', 'ndjson', '--max-old-space-size=16');
