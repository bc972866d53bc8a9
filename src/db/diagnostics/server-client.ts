/**
 * The connection `rigd doctor` reads a PostgreSQL server through (application_name "rigd doctor"):
 * pg is loaded only when one is made, so that doctor and serve on SQLite never load it.
 */
import type pg from 'pg';

/** Connects to url as "rigd doctor", runs fn on that connection, ends it (pg is loaded only here, never on SQLite). */
export async function readServerDatabase<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const { default: pgm } = await import('pg');
  const client = new pgm.Client({ connectionString: url, application_name: 'rigd doctor', connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
