import { Socket } from 'node:net';
import { redactText, redactUrl } from '../../db/database-url.ts';
import { MIGRATION_NAMES } from '../../db/migrations/names.ts';
import { postgresOpenError } from '../../db/dialect/postgres/open-error.ts';
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
  const { default: pg } = await import('pg');
  // The socket is ours (pg's public `stream` option), so that the pooler check knows this end's port.
  const socket = new Socket();
  const client = new pg.Client({ connectionString: url, application_name: 'rigd doctor', connectionTimeoutMillis: 10_000, stream: () => socket });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    const line = postgresOpenError(url, err)?.message ?? redactText(errorText(err));
    return [fail('database', line, `check database.url (host, port, user, password, database) and that the server takes connections from this host (pg_hba.conf)`)];
  }
  try {
    const { rows: v } = await client.query<{ n: string; text: string }>("SELECT current_setting('server_version_num') AS n, current_setting('server_version') AS text");
    const major = Math.floor(Number(v[0]?.n ?? 0) / 10000);
    if (major < MIN_SERVER_VERSION) {
      return [fail('database', `${target}: PostgreSQL ${v[0]?.text} is older than ${MIN_SERVER_VERSION}`, `upgrade the server to PostgreSQL ${MIN_SERVER_VERSION} or newer`)];
    }
    const { rows: privs } = await client.query<{ create_schema: boolean; connect: boolean }>(
      "SELECT has_schema_privilege(current_user, current_schema(), 'CREATE') AS create_schema, has_database_privilege(current_user, current_database(), 'CONNECT') AS connect",
    );
    const { rows: exists } = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
    const done = new Set(exists[0]?.t ? (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name) : []);
    const pending = MIGRATION_NAMES.filter((n) => !done.has(n));
    const { rows: tablePrivs } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind = 'r'
          AND NOT has_table_privilege(current_user, c.oid, 'SELECT, INSERT, UPDATE, DELETE')`,
    );
    const out: Finding[] = [];
    if (!privs[0]?.create_schema && pending.length > 0) {
      out.push(fail('database', `${target}: the login may not create tables in the schema, and ${pending.length} migration(s) are pending`, 'GRANT CREATE ON SCHEMA public TO the rigd login (or run rigd migrate as the owner)'));
    }
    if (tablePrivs.length > 0) {
      out.push(fail('database', `${target}: the login may not read and write ${tablePrivs.map((r) => r.name).join(', ')}`, 'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO the rigd login'));
    }
    if (out.length) return out;
    const budget = await checkConnectionBudget(client, opts.poolMax ?? 10);
    const pooler = await checkPooler(client, opts.directUrl ?? '', socket.localPort);
    const extra = pooler ? [budget, pooler] : [budget];
    if (pending.length > 0) {
      return [warn('database', `${target} (PostgreSQL ${v[0]?.text}) connects; ${pending.length} migration(s) pending: ${pending.join(', ')}`, 'run rigd migrate (rigd serve also applies them on start)'), ...extra];
    }
    return [ok('database', `${target} (PostgreSQL ${v[0]?.text}) connects, ${MIGRATION_NAMES.length} migrations applied, none pending, privileges ok`), ...extra];
  } catch (err) {
    return [fail('database', `${target} cannot be used: ${redactText(errorText(err))}`, 'check the rigd login\'s privileges on the database')];
  } finally {
    await client.end().catch(() => undefined);
  }
}
