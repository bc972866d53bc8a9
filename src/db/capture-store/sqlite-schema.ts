/**
 * The store's tables follow the captures (layout.ts): a table per capture table name, created on
 * first sight with capture_id and its index, and columns added as later captures bring new ones.
 * Runs inside the import's transaction, so a failed import adds nothing either.
 */
import type sqlite3 from 'sqlite3';
import { CAPTURE_ID_COLUMN, captureIdIndexName, quoteIdent, storeColumnType } from './layout.ts';
import { all, exec } from './sqlite-file.ts';
import type { StoreTable } from './writer.ts';

/** The store's capture tables (every table but SQLite's own). */
export async function storeTables(db: sqlite3.Database): Promise<string[]> {
  const rows = await all<{ name: string }>(
    db,
    "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  );
  return rows.map((r) => r.name);
}

function columnDef(name: string, declared: string): string {
  const type = storeColumnType(declared);
  return type ? `${quoteIdent(name)} ${type}` : quoteIdent(name);
}

/**
 * Makes sure the store has a table for `table` with all its columns. Returns the store's name of
 * the table (the spelling of the capture that created it) and how many columns were added.
 */
export async function ensureTable(db: sqlite3.Database, table: StoreTable): Promise<{ name: string; added: number; created: boolean }> {
  const [found] = await all<{ name: string }>(
    db,
    "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE",
    [table.name],
  );
  if (!found) {
    const cols = [`${quoteIdent(CAPTURE_ID_COLUMN)} INTEGER NOT NULL`, ...table.columns.map((c) => columnDef(c.name, c.type))];
    await exec(db, `CREATE TABLE main.${quoteIdent(table.name)} (${cols.join(', ')})`);
    await exec(
      db,
      `CREATE INDEX main.${quoteIdent(captureIdIndexName(table.name))} ON ${quoteIdent(table.name)} (${quoteIdent(CAPTURE_ID_COLUMN)})`,
    );
    return { name: table.name, added: table.columns.length, created: true };
  }
  const have = new Set(
    (await all<{ name: string }>(db, `PRAGMA main.table_info(${quoteIdent(found.name)})`)).map((c) => c.name.toLowerCase()),
  );
  let added = 0;
  for (const c of table.columns) {
    if (have.has(c.name.toLowerCase())) continue;
    await exec(db, `ALTER TABLE main.${quoteIdent(found.name)} ADD COLUMN ${columnDef(c.name, c.type)}`);
    have.add(c.name.toLowerCase());
    added++;
  }
  return { name: found.name, added, created: false };
}
