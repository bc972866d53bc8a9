/**
 * Read-only facts about the PostgreSQL database of database.url for `rigd doctor`: one connection
 * of its own (application_name "rigd doctor"), each fact one statement, asked in the order the
 * doctor judges them. Changes nothing.
 */
import { Socket } from 'node:net';
import type pg from 'pg';
import { redactText } from '../database-url.ts';
import { postgresOpenError } from '../dialect/postgres/open-error.ts';
import { connectStore } from '../capture-store/postgres-writer.ts';

/** umzug's table (src/db/migrate.ts), named here so that the doctor loads no Sequelize. */
const MIGRATIONS_TABLE = 'schema_migrations';

/** A connection refused or failed: the line to print (password masked). */
export class ServerUnreachable extends Error {}

export interface ServerProbe {
  /** server_version_num's major version and server_version's text. */
  version(): Promise<{ major: number; text: string }>;
  /** Whether the login may create tables in its schema (migrations). */
  mayCreateTables(): Promise<boolean>;
  /** The names of the migrations applied (none when umzug's table does not exist). */
  appliedMigrations(): Promise<Set<string>>;
  /** rigd's tables of the schema the login may not read and write. */
  tablesWithoutReadWrite(): Promise<string[]>;
  /** max_connections and superuser_reserved_connections. */
  connectionLimits(): Promise<{ max: number; reserved: number }>;
  /** Nodes not stopped with a heartbeat within the last hour (null: the registry cannot be read). */
  nodesLastHour(): Promise<number | null>;
  /** The client port the server sees for this connection (null: a Unix socket). */
  clientPortSeen(): Promise<number | null>;
  /** The local TCP port this connection left from (undefined when unknown). */
  readonly localPort: number | undefined;
  close(): Promise<void>;
}

/** Connects to url for the doctor; throws ServerUnreachable with the line to print. */
export async function openServerProbe(url: string): Promise<ServerProbe> {
  const { default: pgm } = await import('pg');
  // The socket is ours (pg's public `stream` option), so that the pooler check knows this end's port.
  const socket = new Socket();
  const client: pg.Client = new pgm.Client({ connectionString: url, application_name: 'rigd doctor', connectionTimeoutMillis: 10_000, stream: () => socket });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new ServerUnreachable(postgresOpenError(url, err)?.message ?? redactText(err instanceof Error ? err.message || err.name : String(err)));
  }
  const one = async <T>(sql: string): Promise<T | undefined> => (await client.query<T & pg.QueryResultRow>(sql)).rows[0];
  return {
    async version() {
      const v = await one<{ n: string; text: string }>("SELECT current_setting('server_version_num') AS n, current_setting('server_version') AS text");
      return { major: Math.floor(Number(v?.n ?? 0) / 10000), text: v?.text ?? '' };
    },
    async mayCreateTables() {
      return Boolean((await one<{ create_schema: boolean }>("SELECT has_schema_privilege(current_user, current_schema(), 'CREATE') AS create_schema"))?.create_schema);
    },
    async appliedMigrations() {
      const exists = await one<{ t: string | null }>(`SELECT to_regclass('${MIGRATIONS_TABLE}')::text AS t`);
      if (!exists?.t) return new Set<string>();
      return new Set((await client.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`)).rows.map((r) => r.name));
    },
    async tablesWithoutReadWrite() {
      const { rows } = await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relkind = 'r'
            AND NOT has_table_privilege(current_user, c.oid, 'SELECT, INSERT, UPDATE, DELETE')`,
      );
      return rows.map((r) => r.name);
    },
    async connectionLimits() {
      const row = await one<{ max: string; reserved: string }>("SELECT current_setting('max_connections') AS max, current_setting('superuser_reserved_connections') AS reserved");
      return { max: Number(row?.max), reserved: Number(row?.reserved ?? 0) };
    },
    nodesLastHour() {
      return one<{ n: number }>("SELECT count(*)::int AS n FROM nodes WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '1 hour'").then(
        (row) => Number(row?.n ?? 0),
        () => null,
      );
    },
    async clientPortSeen() {
      const port = (await one<{ port: number | null }>('SELECT inet_client_port() AS port'))?.port;
      return port === null || port === undefined ? null : Number(port);
    },
    get localPort() {
      return socket.localPort;
    },
    close: () => client.end().catch(() => undefined),
  };
}

/**
 * The capture store's schema on the server (its tables other than the catalog, their total size),
 * through the capture store's own client; null when the schema does not exist yet.
 */
export async function inspectCaptureStoreSchema(url: string, schema: string): Promise<{ tables: number; bytes: number } | null> {
  const client = await connectStore(url);
  try {
    const { rows } = await client.query<{ present: boolean; n: string | number; bytes: string | number | null }>(
      `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present,
              count(c.oid) AS n, sum(pg_total_relation_size(c.oid)) AS bytes
         FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
        WHERE s.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname NOT IN ('rigd_store_tables', 'rigd_capture_tables')`,
      [schema],
    );
    const row = rows[0]!;
    return row.present ? { tables: Number(row.n), bytes: Number(row.bytes ?? 0) } : null;
  } finally {
    await client.end().catch(() => undefined);
  }
}
