/**
 * The PostgreSQL side of `rigd db copy`: whether the target is empty, its tables in the order their
 * foreign keys need, the type of each column (to turn SQLite's storage classes into PostgreSQL's
 * values), multi-row INSERTs with bound parameters, and the sequences set past the copied ids.
 */
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { quoteIdent } from '../capture-store/layout.ts';
import { MIGRATIONS_TABLE } from '../migrate.ts';
import type { SourceValue } from './source.ts';

/** PostgreSQL takes at most 65535 bound parameters per statement. */
const MAX_PARAMETERS = 65_535;
/** Rows per INSERT at most. */
export const MAX_ROWS_PER_INSERT = 1000;

export interface TargetColumn {
  name: string;
  /** information_schema's data_type: 'integer', 'bigint', 'boolean', 'timestamp with time zone', 'bytea', ... */
  type: string;
  /** The column takes its default from a sequence (an id). */
  serial: boolean;
}

export interface TargetTable {
  name: string;
  columns: TargetColumn[];
  /** The one-column primary key (rows are paged by it). */
  key: string;
}

function select<T extends object>(sequelize: Sequelize, sql: string, bind: unknown[] = [], transaction?: Transaction): Promise<T[]> {
  return sequelize.query<T>(sql, { bind, type: QueryTypes.SELECT, transaction });
}

/** Tables of the target's current schema. */
export async function targetTableNames(sequelize: Sequelize): Promise<string[]> {
  const rows = await select<{ name: string }>(
    sequelize,
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  return rows.map((r) => r.name);
}

export async function targetCount(sequelize: Sequelize, table: string): Promise<number> {
  const [row] = await select<{ n: string | number }>(sequelize, `SELECT COUNT(*) AS n FROM ${quoteIdent(table)}`);
  return Number(row?.n ?? 0);
}

/**
 * What makes the target not empty, or null when it is: rows in schema_migrations or in any table
 * named in `tables` (the source's tables: rigd's own).
 */
export async function targetNotEmpty(sequelize: Sequelize, tables: readonly string[]): Promise<string | null> {
  const present = new Set(await targetTableNames(sequelize));
  for (const name of [MIGRATIONS_TABLE, ...tables]) {
    if (!present.has(name)) continue;
    const n = await targetCount(sequelize, name);
    if (n > 0) return name === MIGRATIONS_TABLE ? `it has been migrated already (${n} entries in ${MIGRATIONS_TABLE})` : `table ${name} has ${n} rows`;
  }
  return null;
}

/** The target's tables (as the migrations made them), referenced tables before the ones referring to them. */
export async function targetTables(sequelize: Sequelize, names: readonly string[]): Promise<TargetTable[]> {
  const tables: TargetTable[] = [];
  for (const name of names) {
    const columns = await select<{ name: string; type: string; dflt: string | null }>(
      sequelize,
      `SELECT column_name AS name, data_type AS type, column_default AS dflt FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
      [name],
    );
    const keys = await select<{ name: string }>(
      sequelize,
      `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = (quote_ident(current_schema()) || '.' || quote_ident($1))::regclass AND i.indisprimary`,
      [name],
    );
    if (keys.length !== 1) throw new Error(`table ${name} has no one-column primary key: its rows cannot be paged`);
    tables.push({
      name,
      key: keys[0]!.name,
      columns: columns.map((c) => ({ name: c.name, type: c.type, serial: /^nextval\(/.test(c.dflt ?? '') })),
    });
  }
  const refs = await select<{ child: string; parent: string }>(
    sequelize,
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent FROM pg_constraint c
     WHERE c.contype = 'f' AND c.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
  );
  return orderByReferences(tables, refs.map((r) => ({ child: unquote(r.child), parent: unquote(r.parent) })));
}

function unquote(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name;
}

/** tables with every parent before its children (a cycle keeps the remaining tables' order). */
export function orderByReferences<T extends { name: string }>(tables: T[], refs: { child: string; parent: string }[]): T[] {
  const out: T[] = [];
  const left = [...tables];
  while (left.length > 0) {
    const ready = left.findIndex((t) => !refs.some((r) => r.child === t.name && r.parent !== t.name && left.some((l) => l.name === r.parent)));
    out.push(...left.splice(ready === -1 ? 0 : ready, 1));
  }
  return out;
}

/** A SQLite value as the target column takes it: 0/1 as booleans, everything else as it is. */
export function targetValue(column: TargetColumn, value: SourceValue): unknown {
  if (value === null) return null;
  if (column.type === 'boolean') return value === 1 || value === '1' || value === 'true';
  if (column.type === 'timestamp with time zone' || column.type === 'timestamp without time zone') {
    // Sequelize writes SQLite dates as text ('2026-11-23 14:00:00.123 +00:00'), which PostgreSQL reads as it is.
    return typeof value === 'number' ? new Date(value).toISOString() : value;
  }
  if (column.type === 'bytea' && typeof value === 'string') return Buffer.from(value, 'utf8');
  return value;
}

/** Rows per INSERT for a table of `columns` columns. */
export function rowsPerInsert(columns: number): number {
  return Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / Math.max(1, columns))));
}

/** Inserts rows (values in the order of table.columns) in t, as multi-row INSERTs with bound parameters. */
export async function insertRows(sequelize: Sequelize, table: TargetTable, rows: SourceValue[][], t: Transaction): Promise<void> {
  const per = rowsPerInsert(table.columns.length);
  const head = `INSERT INTO ${quoteIdent(table.name)} (${table.columns.map((c) => quoteIdent(c.name)).join(', ')}) VALUES `;
  for (let start = 0; start < rows.length; start += per) {
    const chunk = rows.slice(start, start + per);
    const bind: unknown[] = [];
    const tuples = chunk.map((row) => {
      const slots = table.columns.map((c, i) => {
        bind.push(targetValue(c, row[i] ?? null));
        return `$${bind.length}`;
      });
      return `(${slots.join(', ')})`;
    });
    await sequelize.query(head + tuples.join(', '), { bind, transaction: t });
  }
}

/** Sets every sequence of table past its largest id, so new rows take the next one. */
export async function fixSequences(sequelize: Sequelize, table: TargetTable): Promise<void> {
  for (const c of table.columns.filter((col) => col.serial)) {
    await sequelize.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(MAX(${quoteIdent(c.name)}), 0) + 1, false) FROM ${quoteIdent(table.name)}`,
      { bind: [quoteIdent(table.name), c.name], type: QueryTypes.SELECT },
    );
  }
}
