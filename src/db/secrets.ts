/**
 * Secrets rigd makes for itself, kept in the database (table secrets) so that every node sharing a
 * PostgreSQL database uses the same one. The first writer wins: INSERT ... ON CONFLICT DO NOTHING,
 * then read what is there, so nodes that start at once agree without an error.
 */
import type { Database } from './index.ts';

/** The secret called name: the stored one, or candidate stored now when there is none. */
export async function sharedSecret(db: Database, name: string, candidate: string): Promise<string> {
  await db.writes.run((transaction) =>
    db.sequelize.query('INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', {
      replacements: [name, candidate, new Date()],
      transaction,
    }),
  );
  const [row] = await db.reader.all<{ value: string }>('SELECT value FROM secrets WHERE name = ?', [name]);
  if (!row) throw new Error(`the secret ${name} is missing right after it was stored`);
  return row.value;
}
