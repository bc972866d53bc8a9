import { databaseHomeOf, dialectNameOf, type DialectName } from './dialect/index.ts';

/**
 * Where the database lives, for the commands that word a file and a server differently or work on
 * them with other tools (rigd doctor, backup, restore, db copy): a file in data_dir, or a server at
 * database.url. `engine` names it in what they record (audit details).
 */
export type DatabaseSite = { kind: 'file'; dataDir: string; engine: DialectName } | { kind: 'server'; url: string; engine: DialectName };

/** The site database.url (empty: a file in dataDir) selects. */
export function databaseSite(dataDir: string, url: string): DatabaseSite {
  const engine = dialectNameOf(url);
  return databaseHomeOf(url) === 'server' ? { kind: 'server', url, engine } : { kind: 'file', dataDir, engine };
}
