/**
 * The SQLite store's catalog and physical tables (placement.ts says where a table goes):
 *
 *   rigd_store_tables(physical, key, shape, columns)   -- every physical table, its name key and shape
 *   rigd_capture_tables(capture_id, name, physical, columns, rows)
 *                                                       -- which physical table holds each capture table,
 *                                                          and which column each capture column is in
 *
 * Physical tables are `capture_id INTEGER NOT NULL` and the capture's columns declared WITHOUT a type
 * (no affinity: every value keeps its storage class and bytes); the declared types are in the catalog.
 * A store of the earlier layout (typed columns, no catalog) is registered once, as 'legacy' tables,
 * when a writer first opens it: its rows stay where they are and stay readable; new imports never go
 * into a legacy table, and a capture imported again leaves it.
 *
 * Every function runs inside the caller's transaction on the store connection (`main`).
 */
import type sqlite3 from 'sqlite3';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { captureIndexName, nameKey, place, type CatalogView, type MappedColumn, type Placement, type StoreBounds } from './placement.ts';
import { all, exec, run } from './sqlite-file.ts';

const CATALOG_SQL = `
CREATE TABLE IF NOT EXISTS main.rigd_store_tables (
  physical TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
  key TEXT NOT NULL,
  shape TEXT NOT NULL,
  columns TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS main.rigd_store_tables_key ON rigd_store_tables (key, shape);
CREATE TABLE IF NOT EXISTS main.rigd_capture_tables (
  capture_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  physical TEXT NOT NULL,
  columns TEXT NOT NULL,
  rows INTEGER NOT NULL,
  PRIMARY KEY (capture_id, name)
);
CREATE INDEX IF NOT EXISTS main.rigd_capture_tables_physical ON rigd_capture_tables (physical);
`;

/** Creates the catalog unless it exists; a store of the earlier layout is registered as legacy tables. */
export async function ensureCatalog(db: sqlite3.Database): Promise<void> {
  const [has] = await all<{ n: number }>(db, "SELECT count(*) AS n FROM main.sqlite_schema WHERE type = 'table' AND name = 'rigd_capture_tables'");
  if (has!.n > 0) return;
  await run(db, 'BEGIN IMMEDIATE');
  try {
    const legacy = await all<{ name: string }>(
      db,
      "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'rigd\\_%' ESCAPE '\\'",
    );
    await exec(db, CATALOG_SQL);
    for (const { name } of legacy) {
      const info = await all<{ name: string; type: string }>(db, `PRAGMA main.table_info(${quoteIdent(name)})`);
      const cols = info.filter((c) => c.name !== CAPTURE_ID_COLUMN);
      await run(db, "INSERT OR IGNORE INTO main.rigd_store_tables VALUES (?, ?, 'legacy', ?)", [name, nameKey('sqlite', name), JSON.stringify(cols.map((c) => c.name))]);
      const mapped: MappedColumn[] = cols.map((c) => ({ name: c.name, type: c.type, store: c.name }));
      await run(
        db,
        `INSERT OR IGNORE INTO main.rigd_capture_tables SELECT ${quoteIdent(CAPTURE_ID_COLUMN)}, ?, ?, ?, count(*) FROM main.${quoteIdent(name)} GROUP BY 1`,
        [name, name, JSON.stringify(mapped)],
      );
    }
    await run(db, 'COMMIT');
  } catch (err) {
    await run(db, 'ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The catalog as placement.ts reads it, one lookup per question (its cost never grows with the store). */
export function sqliteCatalogView(db: sqlite3.Database): CatalogView {
  return {
    async find(key, shape) {
      const [row] = await all<{ physical: string; columns: string }>(db, 'SELECT physical, columns FROM main.rigd_store_tables WHERE key = ? AND shape = ? LIMIT 1', [key, shape]);
      return row ? { physical: row.physical, shape, columns: JSON.parse(row.columns) as string[] } : undefined;
    },
    async taken(physical) {
      const [row] = await all<{ n: number }>(db, 'SELECT count(*) AS n FROM main.sqlite_schema WHERE name = ? COLLATE NOCASE', [physical]);
      return row!.n > 0;
    },
  };
}

/** Removes every row a capture has in the store (the physical tables the catalog names, no others); returns how many. */
export async function removeCapture(db: sqlite3.Database, captureId: number): Promise<number> {
  const held = await all<{ physical: string }>(db, 'SELECT DISTINCT physical FROM main.rigd_capture_tables WHERE capture_id = ?', [captureId]);
  let removed = 0;
  for (const { physical } of held) {
    removed += (await run(db, `DELETE FROM main.${quoteIdent(physical)} WHERE ${quoteIdent(CAPTURE_ID_COLUMN)} = ?`, [captureId])).changes;
  }
  await run(db, 'DELETE FROM main.rigd_capture_tables WHERE capture_id = ?', [captureId]);
  return removed;
}

/** Places a capture table (placement.ts) and makes its physical table ready: created, or columns added. */
export async function prepareTable(db: sqlite3.Database, table: { name: string; columns: readonly { name: string; type: string }[] }, bounds: StoreBounds): Promise<Placement> {
  const p = await place('sqlite', table, sqliteCatalogView(db), bounds);
  if (p.create) {
    const cols = [`${quoteIdent(CAPTURE_ID_COLUMN)} INTEGER NOT NULL`, ...p.columns.map((c) => quoteIdent(c.store))];
    await exec(db, `CREATE TABLE main.${quoteIdent(p.physical)} (${cols.join(', ')})`);
    await exec(db, `CREATE INDEX main.${quoteIdent(captureIndexName(p.physical))} ON ${quoteIdent(p.physical)} (${quoteIdent(CAPTURE_ID_COLUMN)})`);
    await run(db, 'INSERT INTO main.rigd_store_tables VALUES (?, ?, ?, ?)', [p.physical, nameKey('sqlite', table.name), p.shape, JSON.stringify(p.columns.map((c) => c.store))]);
  } else if (p.add.length > 0) {
    for (const c of p.add) await exec(db, `ALTER TABLE main.${quoteIdent(p.physical)} ADD COLUMN ${quoteIdent(c)}`);
    const [row] = await all<{ columns: string }>(db, 'SELECT columns FROM main.rigd_store_tables WHERE physical = ?', [p.physical]);
    const columns = [...(JSON.parse(row!.columns) as string[]), ...p.add];
    await run(db, 'UPDATE main.rigd_store_tables SET columns = ? WHERE physical = ?', [JSON.stringify(columns), p.physical]);
  }
  return p;
}

/** Records where a capture's table is (after its rows are in). */
export async function recordCaptureTable(db: sqlite3.Database, captureId: number, name: string, p: Placement, rows: number): Promise<void> {
  await run(db, 'INSERT INTO main.rigd_capture_tables VALUES (?, ?, ?, ?, ?)', [captureId, name, p.physical, JSON.stringify(p.columns), rows]);
}

/** Where one capture's table is, or null: the exact name first, then as SQLite compares names (legacy rows). */
export async function findCaptureTable(db: sqlite3.Database, captureId: number, name: string): Promise<{ physical: string; columns: MappedColumn[] } | null> {
  const rows = await all<{ name: string; physical: string; columns: string }>(
    db,
    'SELECT name, physical, columns FROM main.rigd_capture_tables WHERE capture_id = ? AND name = ? COLLATE NOCASE',
    [captureId, name],
  );
  const row = rows.find((r) => r.name === name) ?? rows[0];
  return row ? { physical: row.physical, columns: JSON.parse(row.columns) as MappedColumn[] } : null;
}

