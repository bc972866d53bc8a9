import { forEngine } from './dialect/engine.ts';
/**
 * Read-only queries in plain, portable SQL with `?` placeholders. The server reads through
 * Sequelize's connection (Database.reader); listing commands of the CLI read through
 * {@link openLiteReader}, which does not load Sequelize (a third of a second on a gateway CPU).
 */
export interface Reader {
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** The engine the SQL runs on, for the few fragments that differ (date arithmetic). @default 'sqlite' */
  readonly engine?: 'sqlite' | 'postgres';
}

/** SQL for the seconds from timestamp expression b to a, on reader's engine. */
export function secondsBetween(reader: Reader, a: string, b: string): string {
  return forEngine(reader.engine ?? 'sqlite', { postgres: `EXTRACT(EPOCH FROM (${a} - ${b}))`, sqlite: `(julianday(${a}) - julianday(${b})) * 86400.0` });
}

/**
 * A value that changes whenever anything is committed to the database (by any connection or process),
 * so what was built from an earlier read can be kept while it stays the same. SQLite: data_version of
 * the reading connection. PostgreSQL: the current snapshot (xmin:xmax:in-progress ids), which moves
 * with every transaction that starts writing or commits (cluster-wide, so it may move without a change
 * to rigd's tables: a rebuild too many, never a stale read).
 */
export async function dataVersion(reader: Reader): Promise<string> {
  const sql = forEngine(reader.engine ?? 'sqlite', { postgres: 'SELECT pg_current_snapshot()::text AS v', sqlite: 'SELECT data_version AS v FROM pragma_data_version' });
  const [row] = await reader.all<{ v: string | number }>(sql);
  return String(row?.v);
}

export interface LiteReader extends Reader {
  close(): Promise<void>;
}

/**
 * A direct driver connection to data_dir's database for reading, or null when the database does
 * not exist yet or is not at the latest migration (then the caller opens it fully, which creates
 * and migrates it). It never writes and never loads Sequelize.
 */
export async function openLiteReader(dataDir: string, url?: string): Promise<LiteReader | null> {
  const { liteReaderOpener, defaultDatabaseUrl } = await import('./dialect/index.ts');
  const target = url ?? defaultDatabaseUrl();
  return (await liteReaderOpener(target))(dataDir, target);
}
