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
  return reader.engine === 'postgres' ? `EXTRACT(EPOCH FROM (${a} - ${b}))` : `(julianday(${a}) - julianday(${b})) * 86400.0`;
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
