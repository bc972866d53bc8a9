// Real SQLite capture files for tests: good captures with known tables, columns and row counts, and
// hostile or broken ones, all made with the sqlite3 package in the test process.
//
//   const cap = await makeCapture(path.join(dir, 'good.sqlite'));            // default tables, thousands of rows
//   cap.tables   // [{ name: 'readings', columns: [...], rows: 5000 }, ...] exactly as the inspector reports
//   await makeCapture(file, { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 10 }] });
//   await makeHostileCapture(file, 'trigger');                                // see HostileKind
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, stat, writeFile } from 'node:fs/promises';
import sqlite3 from 'sqlite3';

export interface CaptureColumnSpec {
  name: string;
  /** Declared type: values are made to fit INTEGER, REAL, TEXT or BLOB affinity (anything else gets text). */
  type: string;
}

export interface CaptureTableSpec {
  name: string;
  columns: CaptureColumnSpec[];
  rows: number;
}

export interface MakeCaptureOptions {
  tables?: CaptureTableSpec[];
  pageSize?: number;
  /** 'wal' leaves the file in WAL mode (header versions 2), checkpointed, as a rig may upload it. */
  journalMode?: 'delete' | 'wal';
  /** Extra statements run after the tables are filled (indexes, hostile objects). */
  extraSql?: string[];
}

export interface MadeCapture {
  path: string;
  tables: CaptureTableSpec[];
  sizeBytes: number;
  sha256: string;
}

export const DEFAULT_CAPTURE_TABLES: CaptureTableSpec[] = [
  {
    name: 'readings',
    columns: [
      { name: 'id', type: 'INTEGER' },
      { name: 'sensor', type: 'TEXT' },
      { name: 'value', type: 'REAL' },
      { name: 'taken_at', type: 'INTEGER' },
    ],
    rows: 5000,
  },
  {
    name: 'events',
    columns: [
      { name: 'id', type: 'INTEGER' },
      { name: 'kind', type: 'TEXT' },
      { name: 'payload', type: 'BLOB' },
    ],
    rows: 3000,
  },
  {
    name: 'gps fixes', // a name that needs quoting
    columns: [
      { name: 'lat', type: 'REAL' },
      { name: 'lon', type: 'REAL' },
      { name: 'note "quoted"', type: 'VARCHAR(40)' },
    ],
    rows: 1200,
  },
  { name: 'empty_table', columns: [{ name: 'x', type: '' }], rows: 0 },
];

function q(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function valueExpr(type: string, i: number): string {
  const t = type.toUpperCase();
  if (t.includes('INT')) return `n * ${i + 1}`;
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return `n * 0.5 + ${i}`;
  if (t.includes('BLOB')) return `randomblob(16 + n % 64)`;
  return `'v' || n || '-${i}'`;
}

export function openDb(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(db)));
  });
}

export function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

export function closeDb(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Makes a real capture database at `file` (which must not exist) and returns what it holds. */
export async function makeCapture(file: string, opts: MakeCaptureOptions = {}): Promise<MadeCapture> {
  const tables = opts.tables ?? DEFAULT_CAPTURE_TABLES;
  const db = await openDb(file);
  try {
    await exec(db, `PRAGMA page_size = ${opts.pageSize ?? 4096}`);
    await exec(db, `PRAGMA journal_mode = ${opts.journalMode ?? 'delete'}`);
    await exec(db, 'BEGIN');
    for (const t of tables) {
      const cols = t.columns.map((c) => `${q(c.name)} ${c.type}`.trim()).join(', ');
      await exec(db, `CREATE TABLE ${q(t.name)} (${cols})`);
      if (t.rows > 0) {
        const values = t.columns.map((c, i) => valueExpr(c.type, i)).join(', ');
        await exec(
          db,
          `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${t.rows})
           INSERT INTO ${q(t.name)} SELECT ${values} FROM s`,
        );
      }
    }
    for (const sql of opts.extraSql ?? []) await exec(db, sql);
    await exec(db, 'COMMIT');
    if (opts.journalMode === 'wal') await exec(db, 'PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    await closeDb(db);
  }
  return { path: file, tables, sizeBytes: (await stat(file)).size, sha256: await sha256File(file) };
}

export type HostileKind =
  | 'random_bytes' // 64 KiB of random bytes
  | 'text' // a text file
  | 'trigger' // a plain table plus a trigger
  | 'view_functions' // a view calling randomblob() over a recursive CTE
  | 'fts5' // an FTS5 virtual table (with its shadow tables)
  | 'check_function' // a CHECK constraint calling a function
  | 'default_function' // a DEFAULT (expression) calling a function
  | 'generated_column' // a generated column
  | 'expression_index' // an index on a function of a column
  | 'forged_trigger_type' // a trigger recorded in sqlite_schema with type 'table'
  | 'custom_collation'; // an index using a collation SQLite does not have built in

/** Makes a hostile or unsupported file at `file`. Returns the name of the offending object, if any. */
export async function makeHostileCapture(file: string, kind: HostileKind): Promise<string | undefined> {
  if (kind === 'random_bytes') {
    await writeFile(file, randomBytes(64 * 1024));
    return undefined;
  }
  if (kind === 'text') {
    await writeFile(file, 'rig_serial,lat,lon\nR-001,52.1,4.3\n'.repeat(200));
    return undefined;
  }
  const base: CaptureTableSpec[] = [
    { name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'v', type: 'TEXT' }], rows: 100 },
  ];
  const extra: Record<Exclude<HostileKind, 'random_bytes' | 'text'>, [string, string[]]> = {
    trigger: ['bump', ['CREATE TRIGGER bump AFTER INSERT ON readings BEGIN UPDATE readings SET v = randomblob(8); END']],
    view_functions: [
      'noise',
      [
        `CREATE VIEW noise AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)
         SELECT randomblob(1000000) AS b FROM r`,
      ],
    ],
    fts5: ['notes', ["CREATE VIRTUAL TABLE notes USING fts5(body)", "INSERT INTO notes VALUES ('hello rig')"]],
    check_function: ['checked', ['CREATE TABLE checked (a TEXT CHECK (length(hex(randomblob(4))) > 0))']],
    default_function: ['defaulted', ['CREATE TABLE defaulted (a BLOB DEFAULT (randomblob(16)))']],
    generated_column: ['computed', ['CREATE TABLE computed (a INTEGER, b INTEGER AS (a * 2))']],
    expression_index: ['by_upper', ['CREATE INDEX by_upper ON readings (upper(v))']],
    forged_trigger_type: [
      'sneaky',
      [
        'CREATE TRIGGER sneaky AFTER INSERT ON readings BEGIN SELECT 1; END',
        'PRAGMA writable_schema = ON',
        "UPDATE sqlite_schema SET type = 'table' WHERE name = 'sneaky'",
        'PRAGMA writable_schema = OFF',
      ],
    ],
    custom_collation: ['by_v', ['CREATE INDEX by_v ON readings (v COLLATE BINARY)']],
  };
  const [name, sql] = extra[kind];
  await makeCapture(file, { tables: base, extraSql: sql });
  if (kind === 'custom_collation') {
    // SQLite refuses to create an index with an unknown collation; rename it in the stored SQL.
    await patchSchemaSql(file, 'by_v', 'COLLATE BINARY', 'COLLATE rigcoll');
  }
  return name;
}

/** Rewrites part of an object's stored SQL in sqlite_schema (as a crafted file would). */
export async function patchSchemaSql(file: string, name: string, from: string, to: string): Promise<void> {
  const db = await openDb(file);
  try {
    await exec(db, 'PRAGMA writable_schema = ON');
    await new Promise<void>((resolve, reject) =>
      db.run('UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE name = ?', [from, to, name], (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  } finally {
    await closeDb(db);
  }
}

/** A capture with one row holding a blob of `bytes` bytes (zeroblob: cheap to make). */
export async function makeHugeRowCapture(file: string, bytes: number): Promise<MadeCapture> {
  return makeCapture(file, {
    tables: [{ name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }], rows: 10 }],
    extraSql: ['CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)', `INSERT INTO blobs (data) VALUES (zeroblob(${bytes}))`],
  });
}

/** Copies the first `keepBytes` bytes of `src` to `dst` (default: half, rounded down to a page). */
export async function truncateCopy(src: string, dst: string, keepBytes?: number): Promise<number> {
  const data = await readFile(src);
  const pageSize = data.readUInt16BE(16) === 1 ? 65536 : data.readUInt16BE(16);
  const keep = keepBytes ?? Math.floor(data.length / 2 / pageSize) * pageSize;
  await writeFile(dst, data.subarray(0, keep));
  return keep;
}

/**
 * Damages a b-tree page of a capture in place: overwrites the page header and cell pointer array
 * of page `page` (1-based; default: a page in the middle of the file) with 0xA5 bytes. Page 1 is
 * the schema's root page: damaging it keeps the file header intact.
 */
export async function corruptPage(file: string, page?: number): Promise<number> {
  const size = (await stat(file)).size;
  const fh = await open(file, 'r+');
  try {
    const head = Buffer.alloc(100);
    await fh.read(head, 0, 100, 0);
    const pageSize = head.readUInt16BE(16) === 1 ? 65536 : head.readUInt16BE(16);
    const target = page ?? Math.max(2, Math.floor(size / pageSize / 2));
    // Page 1 starts with the 100-byte file header; its b-tree page header follows it.
    const at = (target - 1) * pageSize + (target === 1 ? 100 : 0);
    await fh.write(Buffer.alloc(64, 0xa5), 0, 64, at);
    return target;
  } finally {
    await fh.close();
  }
}
