import { redactText, redactUrl } from '../../db/database-url.ts';
import { openServerProbe, type ServerProbe } from '../../db/diagnostics/server-database.ts';
import { MIGRATION_NAMES } from '../../db/migrations/names.ts';
import { checkConnectionBudget, checkPooler } from './connection-budget.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';

/** The oldest PostgreSQL rigd runs on. */
export const MIN_SERVER_VERSION = 13;

/**
 * The PostgreSQL database of database.url: connects, the server is >= 13, every migration is applied,
 * and the login may create tables in the schema (migrations) and read and write rigd's tables; the
 * connection budget (database.pool_max against max_connections, connection-budget.ts).
 * Changes nothing. The URL is printed with its password masked.
 */
export async function checkPostgresDatabase(url: string, opts: { poolMax?: number; directUrl?: string } = {}): Promise<Finding[]> {
  const target = redactUrl(url);
  let probe: ServerProbe;
  try {
    probe = await openServerProbe(url);
  } catch (err) {
    return [fail('database', errorText(err), `check database.url (host, port, user, password, database) and that the server takes connections from this host (pg_hba.conf)`)];
  }
  try {
    const version = await probe.version();
    if (version.major < MIN_SERVER_VERSION) {
      return [fail('database', `${target}: PostgreSQL ${version.text} is older than ${MIN_SERVER_VERSION}`, `upgrade the server to PostgreSQL ${MIN_SERVER_VERSION} or newer`)];
    }
    const mayCreate = await probe.mayCreateTables();
    const done = await probe.appliedMigrations();
    const pending = MIGRATION_NAMES.filter((n) => !done.has(n));
    const noReadWrite = await probe.tablesWithoutReadWrite();
    const out: Finding[] = [];
    if (!mayCreate && pending.length > 0) {
      out.push(fail('database', `${target}: the login may not create tables in the schema, and ${pending.length} migration(s) are pending`, 'GRANT CREATE ON SCHEMA public TO the rigd login (or run rigd migrate as the owner)'));
    }
    if (noReadWrite.length > 0) {
      out.push(fail('database', `${target}: the login may not read and write ${noReadWrite.join(', ')}`, 'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO the rigd login'));
    }
    if (out.length) return out;
    const budget = await checkConnectionBudget(probe, opts.poolMax ?? 10);
    const pooler = await checkPooler(probe, opts.directUrl ?? '');
    const extra = pooler ? [budget, pooler] : [budget];
    if (pending.length > 0) {
      return [warn('database', `${target} (PostgreSQL ${version.text}) connects; ${pending.length} migration(s) pending: ${pending.join(', ')}`, 'run rigd migrate (rigd serve also applies them on start)'), ...extra];
    }
    return [ok('database', `${target} (PostgreSQL ${version.text}) connects, ${MIGRATION_NAMES.length} migrations applied, none pending, privileges ok`), ...extra];
  } catch (err) {
    return [fail('database', `${target} cannot be used: ${redactText(errorText(err))}`, 'check the rigd login\'s privileges on the database')];
  } finally {
    await probe.close();
  }
}
