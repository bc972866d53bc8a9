import type { Command } from 'commander';
import { databaseSite } from '../../db/site.ts';
import { BackupFailed, checkBackupTargets, checkRestoreSource } from '../backup-files.ts';
import { configFor, printJson } from '../context.ts';
import { printLines } from '../terminal-text.ts';
import { formatBytes } from '../views/progress-bar.ts';

async function record(kind: 'backup' | 'restore', config: { data_dir: string; database: { url: string } }, file: string, details: Record<string, unknown>): Promise<void> {
  const { recordCommand } = await import('../../services/audit/record.ts');
  await recordCommand(config.data_dir, config.database.url, { kind, subject: file, details });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * `rigd backup FILE [--capture-store FILE2]`: a consistent copy of the database (and, when asked, of
 * the capture store), safe while rigd serve runs.
 */
export async function backupCommand(file: string, opts: { json?: boolean; captureStore?: string }, cmd: Command): Promise<void> {
  checkBackupTargets(file, opts.captureStore);
  const config = await configFor(cmd);
  const site = databaseSite(config.data_dir, config.database.url);
  if (site.kind === 'server') {
    await pgBackup(site.url, file, opts);
    return record('backup', config, file, { engine: site.engine });
  }
  const { backupDatabase } = await import('../../db/backup.ts');
  const result = await backupDatabase(config.data_dir, file).catch((err: unknown) => {
    throw new BackupFailed(`backup failed: ${message(err)}`);
  });
  let store: { file: string; bytes: number } | undefined;
  if (opts.captureStore) {
    const { backupCaptureStore } = await import('../../db/capture-store/backup.ts');
    store = await backupCaptureStore(config.data_dir, opts.captureStore).catch((err: unknown) => {
      throw new BackupFailed(`backed up the database to ${result.file}, but the capture store backup failed: ${message(err)}`);
    });
  }
  await record('backup', config, result.file, { engine: site.engine, bytes: result.bytes, ...(store ? { capture_store: store.file } : {}) });
  if (opts.json) return printJson(store ? { ...result, capture_store: store } : result);
  printLines(
    `backed up the database to ${result.file} (${formatBytes(result.bytes)}, integrity_check ok)`,
    ...(store ? [`backed up the capture store to ${store.file} (${formatBytes(store.bytes)}, quick_check ok)`] : []),
  );
}

/** `rigd restore FILE`: replaces the database with a verified backup; refuses while rigd serve runs. */
export async function restoreCommand(file: string, opts: { json?: boolean }, cmd: Command): Promise<void> {
  const config = await configFor(cmd);
  const { runningServers } = await import('../../services/server-presence.ts');
  const servers = runningServers(config.data_dir);
  if (servers.length > 0) {
    throw new BackupFailed(`rigd serve is running on ${config.data_dir} (pid ${servers.join(', ')}): stop it first (systemctl stop rigd), then restore`);
  }
  checkRestoreSource(file);
  const site = databaseSite(config.data_dir, config.database.url);
  if (site.kind === 'server') {
    await pgRestore(site.url, file, opts);
    return record('restore', config, file, { engine: site.engine });
  }
  const { restoreDatabase } = await import('../../db/backup.ts');
  const result = await restoreDatabase(config.data_dir, file).catch((err: unknown) => {
    throw new BackupFailed(`restore refused: ${message(err)}`);
  });
  // Into the restored database: its chain goes on from the backup's head.
  await record('restore', config, file, { engine: site.engine, previous: result.previous ?? null });
  if (opts.json) return printJson(result);
  printLines(
    `restored ${file} (integrity_check ok, ${result.migrations.length} migrations)${result.previous ? `; the previous database is kept at ${result.previous}` : ''}`,
    'start rigd serve again: it applies any newer migrations on start',
  );
}

/** PostgreSQL: runs pg_dump (custom format) when installed; otherwise says the exact command. */
async function pgBackup(url: string, file: string, opts: { json?: boolean; captureStore?: string }): Promise<void> {
  const { pgDumpCommand, runPgTool } = await import('../../db/dialect/postgres/dump.ts');
  const dump = pgDumpCommand(url, file);
  const bytes = await runPgTool(dump, file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new BackupFailed(`pg_dump is not installed (Debian: apt-get install postgresql-client); run it yourself: ${dump.display}`);
    throw new BackupFailed(`backup failed: ${message(err)} (the command: ${dump.display})`);
  });
  // The capture store is schema rigd_captures of the same database: the dump holds it.
  const storeNote = opts.captureStore
    ? `--capture-store: on PostgreSQL the capture store is schema rigd_captures of the same database and is in this dump; ${opts.captureStore} was not written`
    : undefined;
  if (opts.json) {
    return printJson({ file: dump.args.find((a) => a.startsWith('--file='))!.slice(7), bytes, command: dump.display, ...(storeNote ? { capture_store: { in_dump: true, note: storeNote } } : {}) });
  }
  printLines(`backed up the database with: ${dump.display}`, `(${formatBytes(bytes)}; restore it with rigd restore FILE, which runs pg_restore)`, ...(storeNote ? [storeNote] : []));
}

/** PostgreSQL: runs pg_restore over the database when installed; otherwise says the exact command. */
async function pgRestore(url: string, file: string, opts: { json?: boolean }): Promise<void> {
  const { pgRestoreCommand, runPgTool } = await import('../../db/dialect/postgres/dump.ts');
  const restore = pgRestoreCommand(url, file);
  await runPgTool(restore, file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new BackupFailed(`pg_restore is not installed (Debian: apt-get install postgresql-client); run it yourself: ${restore.display}`);
    throw new BackupFailed(`restore refused: ${message(err)} (the command: ${restore.display})`);
  });
  if (opts.json) return printJson({ restored: file, command: restore.display });
  printLines(`restored ${file} with: ${restore.display}`, 'start rigd serve again: it applies any newer migrations on start');
}
