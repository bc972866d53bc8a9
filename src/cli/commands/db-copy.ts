import type { Command } from 'commander';
import { databaseUrlProblem, redactUrl } from '../../db/database-url.ts';
import { databaseSite } from '../../db/site.ts';
import { DomainError } from '../../errors.ts';
import { configFor, printJson } from '../context.ts';
import { UsageError } from '../fail.ts';
import { renderTable } from '../table.ts';
import { printLines } from '../terminal-text.ts';

class CopyFailed extends DomainError {
  constructor(message: string) {
    super('unprocessable', 'copy_failed', message);
  }
}

/**
 * `rigd db copy --to postgres://...`: copies data_dir's SQLite database and capture store into an
 * empty PostgreSQL database, checks the row counts, and says the config change to make.
 */
export async function dbCopyCommand(opts: { to: string; json?: boolean }, cmd: Command): Promise<void> {
  const problem = databaseUrlProblem(opts.to);
  if (opts.to === '' || problem || databaseSite('', opts.to).kind !== 'server') {
    throw new UsageError(`--to ${redactUrl(opts.to)} ${problem ?? 'is empty (expected postgres://user:password@host:5432/database)'}`);
  }
  const config = await configFor(cmd);
  if (databaseSite(config.data_dir, config.database.url).kind === 'server') {
    throw new CopyFailed(`rigd already runs on PostgreSQL (database.url ${redactUrl(config.database.url)}): there is no SQLite database to copy`);
  }
  const { runningServers } = await import('../../services/server-presence.ts');
  const servers = runningServers(config.data_dir);
  if (servers.length > 0) {
    throw new CopyFailed(`rigd serve is running on ${config.data_dir} (pid ${servers.join(', ')}): stop it first (systemctl stop rigd), then copy`);
  }
  const { copyIntoServer } = await import('../../db/copy/to-server.ts');
  let result;
  try {
    // On a terminal, where the copy is (a large rig_reports takes a while); nothing otherwise.
    result = await copyIntoServer(config.data_dir, opts.to, process.stderr.isTTY ? (table, rows) => process.stderr.write(`\rcopying ${table}: ${rows} rows\x1b[K`) : undefined);
  } finally {
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  }
  const shown = redactUrl(opts.to);
  if (result.ok) {
    // Into the target: its audit chain is the copied one, and goes on from there.
    const { recordCommand } = await import('../../services/audit/record.ts');
    await recordCommand(config.data_dir, opts.to, { kind: 'db.copy', subject: shown, details: { from: 'sqlite', tables: result.tables.length } }, { migrate: false });
  }
  if (opts.json) {
    printJson({ ok: result.ok, target: shown, migrations: result.migrations, tables: result.tables });
  } else {
    const table = renderTable(
      ['TABLE', 'SQLITE', 'POSTGRESQL', ''],
      result.tables.map((r) => [r.table, String(r.source), String(r.target), r.ok ? 'ok' : 'DIFFERS']),
    );
    printLines(...table.trimEnd().split('\n'));
  }
  if (!result.ok) {
    const bad = result.tables.filter((r) => !r.ok).map((r) => r.table);
    throw new CopyFailed(`row counts differ in ${bad.join(', ')}: do not switch to ${shown}; drop and recreate that database, then copy again`);
  }
  if (!opts.json) {
    // With database.url set, the embedded store is allowed for one node only (cluster.single_node).
    const embedded = config.storage.driver === 'embedded';
    printLines(
      '',
      `copied to ${shown}; the SQLite files in ${config.data_dir} are left untouched.`,
      'To run on PostgreSQL, stop here and set in the config file:',
      'database:',
      `  url: "${shown}"`,
      ...(embedded ? ['cluster:', '  single_node: true'] : []),
      `or in the environment (e.g. /etc/rigd/rigd.env): RIGD_DATABASE_URL=${shown}${embedded ? ' and RIGD_CLUSTER_SINGLE_NODE=true' : ''}`,
      '(put the real password where *** stands), then start rigd serve.',
      ...(embedded
        ? [
            "cluster.single_node: storage.driver is embedded, which keeps objects on this node's disk and so serves one node only;",
            'to run several nodes, move the objects to MinIO and set storage.driver: minio instead.',
          ]
        : []),
    );
  }
}
