import { dialectNameOf } from '../dialect/index.ts';

/**
 * Where the database lives, for the checks of `rigd doctor` (they word a file and a server
 * differently): a file in data_dir, or a server at database.url.
 */
export type DatabaseSite = { kind: 'file'; dataDir: string } | { kind: 'server'; url: string };

const SITES = { sqlite: 'file', postgres: 'server' } as const;

/** The site database.url (empty: a file in dataDir) selects. */
export function databaseSite(dataDir: string, url: string): DatabaseSite {
  return SITES[dialectNameOf(url)] === 'server' ? { kind: 'server', url } : { kind: 'file', dataDir };
}
