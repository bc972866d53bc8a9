// `--engine sqlite|postgres` of the report benches: SQLite in data_dir, or a throwaway PostgreSQL
// cluster on this machine (bench/engines/pg-cluster.ts) whose database rigd gets as database.url.
import { startPgCluster, type PgCluster } from '../engines/pg-cluster.ts';

export type Engine = 'sqlite' | 'postgres';

export function engineFlag(argv: string[]): Engine {
  const i = argv.indexOf('--engine');
  const value = i >= 0 ? argv[i + 1] : (argv.find((a) => a.startsWith('--engine='))?.slice('--engine='.length) ?? 'sqlite');
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`--engine must be sqlite or postgres, got "${value}"`);
  return value;
}

export interface Database {
  /** database.url for rigd: empty on SQLite. */
  url: string;
  label: string;
  /** PostgreSQL: the postmaster's pid, for the server's CPU (undefined on SQLite). */
  serverPid?: () => number;
  stop(): void;
}

export async function openEngine(engine: Engine, name: string): Promise<Database> {
  if (engine === 'sqlite') return { url: '', label: 'SQLite', stop: () => undefined };
  const cluster: PgCluster = await startPgCluster();
  try {
    return { url: await cluster.createDatabase(name), label: `PostgreSQL ${cluster.version.split(' ')[0]}`, serverPid: () => cluster.pid(), stop: () => cluster.stop() };
  } catch (err) {
    cluster.stop();
    throw err;
  }
}
