import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import { sharedByNodes, type Database } from '../../db/index.ts';
import { sharedSecret } from '../../db/secrets.ts';

/** The name of the session cookie's secret (a file in data_dir on SQLite, a row of secrets on PostgreSQL). */
export const COOKIE_SECRET = 'cookie-secret';

/**
 * The `_service_pm_session` cookie's secret: server.cookie_secret when set; else, on PostgreSQL,
 * the one stored in the database (made by whichever node came first, so every node seals and opens
 * the same cookies); else (SQLite) the file in data_dir.
 */
export async function cookieSecret(config: Readonly<Config>, db: Database): Promise<string> {
  if (config.server.cookie_secret) return config.server.cookie_secret;
  if (sharedByNodes(db)) return sharedSecret(db, COOKIE_SECRET, newSecret(32));
  return loadOrCreateSecret(config.data_dir, COOKIE_SECRET);
}

function newSecret(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Returns the secret stored in dataDir/name, creating it (mode 0600) on first use.
 * Used for secrets an operator need not manage on a one-node install (cookie sealing on SQLite).
 */
export function loadOrCreateSecret(dataDir: string, name: string, bytes = 32): string {
  const file = path.join(dataDir, name);
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = newSecret(bytes);
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
}
