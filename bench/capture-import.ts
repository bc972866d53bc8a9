// Capture import throughput and memory: builds a capture of about 200 MB (several tables, mixed types,
// NULLs and blobs), imports it into a fresh capture store through the sandboxed child, and prints
// rows/s, MB/s, the RSS growth of this process (rigd's side: it writes the store) and the peak RSS of
// the capture child. Target: parent RSS growth <= 64 MB. The baseline is taken after a full GC (run
// with --expose-gc, as the npm script does); the parent never forces a GC during the import.
// Run by hand: npm run bench:capture-import
// Env: BENCH_MB (default 200), BENCH_BATCH_BYTES (default the import's), BENCH_KEEP=1 keeps the files,
// RIGD_BENCH_DATABASE_URL=postgres://... imports into that database's store schema (rigd_captures,
// dropped first) instead of a SQLite file.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { makeCapture, SCALE } from './capture-import-data.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { CAPTURE_STORE_SCHEMA, captureStorePath, openStoreWriter } from '../src/db/capture-store/index.ts';
import { connectStore } from '../src/db/capture-store/postgres-writer.ts';
import { importCapture } from '../src/ingest/import.ts';

const TARGET_MB = Number(process.env.BENCH_MB ?? 200);
const MB = 1_000_000;

/** Committed bytes of V8's young generation (new space and new large objects). */
function youngBytes(): number {
  return getHeapSpaceStatistics()
    .filter((s) => s.space_name === 'new_space' || s.space_name === 'new_large_object_space')
    .reduce((n, s) => n + s.space_size, 0);
}

function rssKb(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-capture-import-'));
  try {
    const file = path.join(work, 'capture.sqlite');
    const size = await makeCapture(file, TARGET_MB * SCALE);
    const dataDir = path.join(work, 'data');
    const url = process.env.RIGD_BENCH_DATABASE_URL ?? '';
    if (url) {
      const c = await connectStore(url);
      await c.query(`DROP SCHEMA IF EXISTS ${CAPTURE_STORE_SCHEMA} CASCADE`);
      await c.end();
    }
    const store = await openStoreWriter(dataDir, url);
    console.log(`# store: ${url ? `PostgreSQL schema ${CAPTURE_STORE_SCHEMA}` : 'SQLite file'}`);
    global.gc?.();
    await new Promise((r) => setTimeout(r, 300));
    const baseline = rssKb();
    let peak = baseline;
    const heapBase = process.memoryUsage();
    const youngBase = youngBytes();
    let atPeak = heapBase;
    let youngAtPeak = youngBase;
    const sampler = setInterval(() => {
      const now = rssKb();
      if (now > peak) {
        peak = now;
        atPeak = process.memoryUsage();
        youngAtPeak = youngBytes();
      }
    }, 20);
    let childKb = 0;
    let bytes = 0;
    const t0 = performance.now();
    const tables = await importCapture(file, 1, store, {
      maxBytes: 10 * size,
      timeoutMs: 3_600_000,
      onStats: (s) => (childKb = s.maxRssKb),
      onProgress: (p) => (bytes = p.bytes),
      ...(process.env.BENCH_BATCH_BYTES ? { batchBytes: Number(process.env.BENCH_BATCH_BYTES) } : {}),
    });
    const s = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssKb());
    await store.close();
    let storeBytes: number;
    if (url) {
      const c = await connectStore(url);
      const { rows: r } = await c.query(
        'SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS b FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = \'r\'',
        [CAPTURE_STORE_SCHEMA],
      );
      storeBytes = Number(r[0].b);
      await c.end();
    } else storeBytes = statSync(captureStorePath(dataDir)).size;
    const total = tables.reduce((n, x) => n + x.rows, 0);
    const d = (k: keyof NodeJS.MemoryUsage) => ((atPeak[k] - heapBase[k]) / MB).toFixed(1);
    const young = ((youngAtPeak - youngBase) / MB).toFixed(1);
    console.log(
      `# at the RSS peak, growth of V8 heap ${d('heapTotal')} MB (young generation ${young} MB), external ${d('external')} MB (array buffers ${d('arrayBuffers')} MB)`,
    );
    console.log(`# capture import: ${(size / MB).toFixed(0)} MB file, ${tables.length} tables, ${total} rows, ${(bytes / MB).toFixed(0)} MB of values`);
    for (const x of tables) console.log(`#   ${x.name}: ${x.rows} rows, time ${x.time_column ?? '-'} ${x.first ?? ''} .. ${x.last ?? ''}`);
    console.log('seconds  rows/s   file_MB/s  rigd_rss_base_MB  rigd_rss_growth_MB  child_peak_rss_MB  store_MB');
    console.log(
      [
        s.toFixed(1).padStart(7),
        Math.round(total / s).toString().padStart(7),
        (size / MB / s).toFixed(1).padStart(10),
        (baseline / 1024).toFixed(0).padStart(16),
        ((peak - baseline) / 1024).toFixed(1).padStart(18),
        (childKb / 1024).toFixed(0).padStart(17),
        (storeBytes / MB).toFixed(0).padStart(8),
      ].join('  '),
    );
  } finally {
    if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
  }
}

await main();
