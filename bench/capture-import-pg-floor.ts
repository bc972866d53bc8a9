// What PostgreSQL alone needs for a capture's rows, as the floor under rigd's import there: the same
// capture as bench/capture-import-e2e.ts (bench/capture-import-data.ts), its rows written beforehand
// into COPY text files, then timed: COPY FROM STDIN of each table into a fresh table, all in one
// transaction, on a throwaway cluster with the server's default durability (bench/capture-import-pg.ts)
//  - jsonb: the store's layout, every value a class-carrying jsonb (pg-values.ts, pg-copy.ts's text)
//  - native: the same rows as int8 / float8 / text / bytea columns (no class kept: not the store)
// against the sqlite3 CLI's copy of the same tables into a fresh file (the e2e bench's baseline).
// Run by hand: npm run bench:capture-import-pg-floor   Env: BENCH_MB (default 100).
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import sqlite3 from 'sqlite3';
import { copyLines } from '../src/db/capture-store/pg-copy.ts';
import { CAPTURE_TABLES, makeCapture, SCALE } from './capture-import-data.ts';
import { startCluster } from './capture-import-pg.ts';

const MB = 1_000_000;
const SIZE_MB = Number(process.env.BENCH_MB ?? 100);
const run = promisify(execFile);
const NATIVE: Record<string, string> = { i: 'int8', r: 'float8', t: 'text', b: 'bytea' };

function nativeField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (Buffer.isBuffer(v)) return `\\\\x${v.toString('hex')}`;
  const s = String(v);
  return /[\\\n\r\t]/.test(s) ? s.replace(/[\\\n\r\t]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!) : s;
}

/** Writes `table`'s rows as COPY text, jsonb and native; returns its columns with their native types. */
async function dump(db: sqlite3.Database, table: string, jsonb: string, native: string): Promise<{ name: string; type: string }[]> {
  const names = await new Promise<string[]>((resolve, reject) =>
    db.all(`PRAGMA table_info(${table})`, (err, rows: { name: string }[]) => (err ? reject(err) : resolve(rows.map((r) => r.name)))),
  );
  const types = new Map<string, string>();
  const j = createWriteStream(jsonb);
  const n = createWriteStream(native);
  const cls = names.map((c) => `substr(typeof(${c}), 1, 1)`).join(' || ');
  let rows: unknown[][] = [];
  let classes: string[] = [];
  const flush = async () => {
    if (!j.write(copyLines(1, rows, names.length, classes, table))) await once(j, 'drain');
    if (!n.write(rows.map((r) => ['1', ...r.map(nativeField)].join('\t') + '\n').join(''))) await once(n, 'drain');
    rows = [];
    classes = [];
  };
  let last = 0;
  for (;;) {
    const page = await new Promise<Record<string, unknown>[]>((resolve, reject) =>
      db.all(`SELECT rowid AS k, ${names.join(', ')}, ${cls} AS cls FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT 2000`, [last], (err, r: Record<string, unknown>[]) => (err ? reject(err) : resolve(r))),
    );
    if (page.length === 0) break;
    for (const r of page) {
      rows.push(names.map((c) => r[c]));
      classes.push(String(r.cls));
      names.forEach((c, i) => {
        const k = String(r.cls)[i]!;
        if (k !== 'n' && !types.has(c)) types.set(c, NATIVE[k]!);
      });
    }
    last = Number(page[page.length - 1]!.k);
    await flush();
  }
  j.end();
  n.end();
  await Promise.all([once(j, 'finish'), once(n, 'finish')]);
  return names.map((name) => ({ name, type: types.get(name) ?? 'text' }));
}

async function timedCopy(client: pg.Client, files: { table: string; file: string; columns: string }[]): Promise<number> {
  const t0 = performance.now();
  await client.query('BEGIN');
  for (const f of files) {
    await client.query(`CREATE TABLE ${f.table} (capture_id int8, ${f.columns})`);
    await pipeline(createReadStream(f.file, { highWaterMark: 1024 * 1024 }), client.query(copyFrom(`COPY ${f.table} FROM STDIN`)));
  }
  await client.query('COMMIT');
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-pg-floor-'));
  const cluster = await startCluster();
  try {
    const capture = path.join(work, 'cap.sqlite');
    const size = await makeCapture(capture, SIZE_MB * SCALE);
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d: sqlite3.Database = new sqlite3.Database(capture, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(d)));
    });
    const jsonb: { table: string; file: string; columns: string }[] = [];
    const native: { table: string; file: string; columns: string }[] = [];
    for (const t of CAPTURE_TABLES) {
      const cols = await dump(db, t, path.join(work, `${t}.jsonb.copy`), path.join(work, `${t}.native.copy`));
      jsonb.push({ table: `j_${t}`, file: path.join(work, `${t}.jsonb.copy`), columns: cols.map((c) => `${c.name} jsonb`).join(', ') });
      native.push({ table: `n_${t}`, file: path.join(work, `${t}.native.copy`), columns: cols.map((c) => `${c.name} ${c.type}`).join(', ') });
    }
    await new Promise<void>((resolve) => db.close(() => resolve()));
    const sql = [`ATTACH '${capture}' AS c;`, 'BEGIN;', ...CAPTURE_TABLES.map((t) => `CREATE TABLE ${t} AS SELECT * FROM c.${t};`), 'COMMIT;'].join('\n');
    const target = path.join(work, 'copy.sqlite');
    const t0 = performance.now();
    await run('sqlite3', [target, sql]);
    const sqliteS = (performance.now() - t0) / 1000;
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    const jsonbS = await timedCopy(client, jsonb);
    const nativeS = await timedCopy(client, native);
    await client.end();
    console.log(`# PostgreSQL ${cluster.version} alone, COPY FROM STDIN of prepared files, one transaction; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log('size_MB  sqlite3_s  pg_jsonb_s  pg_native_s  ratio_jsonb  ratio_native');
    console.log(
      [(size / MB).toFixed(0).padStart(7), sqliteS.toFixed(2).padStart(9), jsonbS.toFixed(2).padStart(10), nativeS.toFixed(2).padStart(11), (sqliteS / jsonbS).toFixed(2).padStart(11), (sqliteS / nativeS).toFixed(2).padStart(12)].join('  '),
    );
  } finally {
    cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
