import { openDatabase } from '../../db/index.ts';
import { appendAudit, cliActor, type AuditEntry } from './log.ts';

/**
 * Records an operator's command that works on database files rather than through the app (backup,
 * restore, db copy) in the audit log of the database at url (data_dir's SQLite when empty). Never
 * throws: the command's work is done; a record that cannot be written is said on stderr.
 */
export async function recordCommand(dataDir: string, url: string, entry: Omit<AuditEntry, 'actor'>, opts: { migrate?: boolean } = {}): Promise<void> {
  try {
    const db = await openDatabase(dataDir, { url, migrate: opts.migrate ?? true });
    try {
      await appendAudit(db, { ...entry, actor: cliActor() });
    } finally {
      await db.close();
    }
  } catch (err) {
    process.stderr.write(`rigd: warning: the ${entry.kind} is done, but it could not be recorded in the audit log: ${(err as Error).message.split('\n')[0]}\n`);
  }
}
