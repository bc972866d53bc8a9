/**
 * `rigd db copy`: data_dir's SQLite service database (and capture store) into an empty PostgreSQL
 * database. The SQLite files are only read.
 *
 *   refuse unless: the source is at this rigd's latest migration, the target is empty
 *   migrate the target (rigd's own schema, under the advisory lock)
 *   per table, referenced tables first: pages of PAGE_ROWS rows in id order, each page one
 *     transaction of multi-row INSERTs with bound parameters; then the table's sequences past max(id)
 *   the capture store, capture by capture, through the CaptureStoreWriter contract
 *   count every table on both sides
 *
 * One transaction per page, not per table: a table of millions of rows is not one transaction
 * holding hours of work that a late failure throws away, and a failure leaves a target that is
 * not empty in either case (the migrations are committed first), so the operator starts over on a
 * fresh database whatever the transaction size.
 */
import type { Sequelize } from 'sequelize';
import { DomainError } from '../../errors.ts';
import { all, openStoreReadOnly } from '../capture-store/read.ts';
import type { CaptureStoreWriter } from '../capture-store/writer.ts';
import { MIGRATIONS_TABLE, migrate } from '../migrate.ts';
import { MIGRATION_NAMES } from '../migrations/names.ts';
import { copyCaptureStore, importedCaptures, storeTableCounts } from './capture-store-copy.ts';
import { openServiceSource, sourceColumns, sourceCount, sourcePages, sourceTables } from './source.ts';
import { fixSequences, insertRows, targetCount, targetNotEmpty, targetTableNames, targetTables } from './target.ts';

/** Rows read and written per page (one transaction each). */
export const PAGE_ROWS = 5000;

export class CopyRefused extends DomainError {
  constructor(message: string) {
    super('conflict', 'copy_refused', message);
  }
}

export interface CountRow {
  /** A service table, or `capture store: <table>`. */
  table: string;
  source: number;
  target: number;
  ok: boolean;
}

export interface CopyResult {
  tables: CountRow[];
  migrations: string[];
  ok: boolean;
}

export interface CopyOptions {
  dataDir: string;
  /** The target, connected (not migrated); the caller closes it. */
  target: Sequelize;
  /** Opens the target's capture store; called only when the source store has rows. */
  openCaptureStore: () => Promise<CaptureStoreWriter>;
  onProgress?: (table: string, rows: number) => void;
}

async function checkSourceMigrations(db: import('sqlite3').Database): Promise<void> {
  const done = (await all<{ name: string }>(db, `SELECT name FROM ${MIGRATIONS_TABLE}`).catch(() => [])).map((r) => r.name);
  const known = new Set<string>(MIGRATION_NAMES);
  const unknown = done.filter((n) => !known.has(n));
  if (unknown.length) throw new CopyRefused(`the SQLite database was migrated by a newer rigd (${unknown.join(', ')}): copy with that rigd`);
  const pending = MIGRATION_NAMES.filter((n) => !done.includes(n));
  if (pending.length) throw new CopyRefused(`the SQLite database is not at this rigd's latest migration (${pending.length} pending): run rigd migrate first`);
}

export async function copyToPostgres(opts: CopyOptions): Promise<CopyResult> {
  const source = await openServiceSource(opts.dataDir);
  if (!source) throw new CopyRefused(`there is no SQLite database in ${opts.dataDir}: nothing to copy`);
  const store = await openStoreReadOnly(opts.dataDir);
  let writer: CaptureStoreWriter | undefined;
  try {
    await checkSourceMigrations(source.db);
    const names = (await sourceTables(source.db)).filter((n) => n !== MIGRATIONS_TABLE);
    const busy = await targetNotEmpty(opts.target, names);
    if (busy) throw new CopyRefused(`the target database is not empty (${busy}): copy only into a new, empty database; nothing was written`);
    const storeCounts = store ? await storeTableCounts(store.db) : new Map<string, number>();
    const storeRows = [...storeCounts.values()].reduce((a, b) => a + b, 0);
    if (storeRows > 0) writer = await opts.openCaptureStore();

    const migrations = await migrate(opts.target, opts.dataDir);
    const present = new Set(await targetTableNames(opts.target));
    const missing = names.filter((n) => !present.has(n));
    if (missing.length) throw new CopyRefused(`the target lacks table ${missing.join(', ')} after its migrations`);
    const tables = await targetTables(opts.target, names);
    for (const table of tables) {
      const have = new Set(await sourceColumns(source.db, table.name));
      const lacking = table.columns.filter((c) => !have.has(c.name)).map((c) => c.name);
      if (lacking.length) throw new CopyRefused(`the SQLite table ${table.name} lacks column ${lacking.join(', ')}`);
      let copied = 0;
      const columns = table.columns.map((c) => c.name);
      for await (const page of sourcePages(source.db, table.name, table.key, columns, PAGE_ROWS)) {
        await opts.target.transaction((t) => insertRows(opts.target, table, page, t));
        copied += page.length;
        opts.onProgress?.(table.name, copied);
      }
      await fixSequences(opts.target, table);
    }
    let copiedStore = new Map<string, number>();
    if (writer && store) {
      copiedStore = (await copyCaptureStore(store.db, importedCaptures(source.db), writer, (id, rows) => opts.onProgress?.(`capture ${id}`, rows))).rows;
    }

    const counts: CountRow[] = [];
    for (const table of tables) {
      const s = await sourceCount(source.db, table.name);
      const t = await targetCount(opts.target, table.name);
      counts.push({ table: table.name, source: s, target: t, ok: s === t });
    }
    for (const [name, s] of [...storeCounts].sort(([a], [b]) => a.localeCompare(b))) {
      const t = copiedStore.get(name) ?? 0;
      counts.push({ table: `capture store: ${name}`, source: s, target: t, ok: s === t });
    }
    return { tables: counts, migrations, ok: counts.every((c) => c.ok) };
  } finally {
    await writer?.close().catch(() => undefined);
    await store?.close();
    await source.close();
  }
}
