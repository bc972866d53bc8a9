import pg from 'pg';
import { Sequelize } from 'sequelize';
import { noteConnectionLost } from '../../connection-status.ts';
import type { ConnectOptions, PostgresSettings } from '../contract.ts';

/** database.* defaults (config/schema.ts has the same): what a Sequelize instance made without config uses. */
export const POSTGRES_DEFAULTS: PostgresSettings = {
  direct_url: '',
  pool_max: 10,
  acquire_timeout_ms: 2000,
  lock_timeout_s: 5,
  statement_timeout_s: 30,
  idle_in_transaction_timeout_s: 4,
  keepalive_s: 10,
};

/** Connections the pool keeps at most by default: the write path uses up to BESIDE_WRITES + 1, the rest serve reads. */
export const POOL_MAX = POSTGRES_DEFAULTS.pool_max;

/**
 * Connections each `rigd serve` holds beside its pool, on database.direct_url (else url): LISTEN,
 * the cluster duties lock, the capture store. Migrations take one more for a moment at start.
 */
export const DEDICATED_CONNECTIONS = 3;

let parsersSet = false;
/**
 * Counts and sums come back as int8/numeric, which pg returns as text by default (they may exceed
 * 2^53). rigd's counts and ids never do, and SQLite returns numbers: PostgreSQL does the same here.
 */
function setNumberParsers(): void {
  if (parsersSet) return;
  parsersSet = true;
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
}

interface Target {
  url: string;
  settings: PostgresSettings;
}
const targets = new WeakMap<Sequelize, Target>();

function targetOf(sequelize: Sequelize): Target {
  const target = targets.get(sequelize);
  if (target === undefined) throw new TypeError('not a PostgreSQL database of rigd');
  return target;
}

/** The URL a Sequelize instance of createSequelize was made with (database.url). */
export function urlOf(sequelize: Sequelize): string {
  return targetOf(sequelize).url;
}

/**
 * Where connections that need a session of their own go (LISTEN, session advisory locks, the
 * capture store's prepared statements): database.direct_url, else database.url.
 */
export function sessionUrlOf(sequelize: Sequelize): string {
  const { url, settings } = targetOf(sequelize);
  return settings.direct_url || url;
}

/** The connection settings of a Sequelize instance of createSequelize. */
export function settingsOf(sequelize: Sequelize): PostgresSettings {
  return targetOf(sequelize).settings;
}

/** pg's keepalive options: the first probe after keepalive_s idle seconds (not the kernel's 2 hours). */
export function keepAliveOptions(settings: Pick<PostgresSettings, 'keepalive_s'>): { keepAlive: true; keepAliveInitialDelayMillis: number } {
  return { keepAlive: true, keepAliveInitialDelayMillis: settings.keepalive_s * 1000 };
}

/** A client of its own on the session URL (not from the pool), named `rigd <what>` in pg_stat_activity. */
export function sessionClient(sequelize: Sequelize, what: string): pg.Client {
  const { settings } = targetOf(sequelize);
  return new pg.Client({ connectionString: sessionUrlOf(sequelize), application_name: `rigd ${what}`, connectionTimeoutMillis: 10_000, ...keepAliveOptions(settings) });
}

/**
 * Whether the pool's connections take the write bounds (lock_timeout, statement_timeout,
 * idle_in_transaction_session_timeout) as startup parameters: when they go straight to the server.
 * Through a transaction-mode pooler (direct_url set) they cannot (PgBouncer refuses startup
 * parameters it does not know, and a session setting would not follow the client): every write
 * transaction then begins with writeBoundsSql instead, one more round trip.
 */
export function boundsAtStartup(settings: PostgresSettings): boolean {
  return !settings.direct_url;
}

/** The bounds as pg's startup parameters, in ms. */
function startupBounds(settings: PostgresSettings): Record<string, number> {
  return {
    lock_timeout: settings.lock_timeout_s * 1000,
    statement_timeout: settings.statement_timeout_s * 1000,
    idle_in_transaction_session_timeout: settings.idle_in_transaction_timeout_s * 1000,
  };
}

/**
 * The statement every write transaction begins with through a pooler: its lock wait, statement
 * time and idle time bounded. SET LOCAL lasts to the transaction's end, so it holds through a
 * transaction-mode pooler and leaves nothing behind on the server's session.
 */
export function writeBoundsSql(settings: PostgresSettings): string {
  return [
    `SET LOCAL lock_timeout = '${settings.lock_timeout_s}s'`,
    `SET LOCAL statement_timeout = '${settings.statement_timeout_s}s'`,
    `SET LOCAL idle_in_transaction_session_timeout = '${settings.idle_in_transaction_timeout_s}s'`,
  ].join('; ');
}

/** pg with keepalive on every connection Sequelize opens (Sequelize passes only keepAlive on). */
function pgWithKeepAlive(settings: PostgresSettings): typeof pg {
  const options = keepAliveOptions(settings);
  class Client extends pg.Client {
    constructor(config: pg.ClientConfig) {
      super({ ...config, ...options });
    }
  }
  // Everything else (types, native) as pg's own: read through the prototype, never copied.
  return Object.create(pg, { Client: { value: Client } }) as typeof pg;
}

/**
 * A Sequelize instance on the PostgreSQL database url names: a pool of database.pool_max
 * connections, opened lazily, whose callers wait at most database.acquire_timeout_ms for one; each
 * connection with the write bounds as session settings unless url is a pooler (boundsAtStartup).
 */
export function createSequelize(url: string, opts: ConnectOptions = {}): Sequelize {
  setNumberParsers();
  const settings: PostgresSettings = { ...POSTGRES_DEFAULTS, ...opts.postgres };
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    dialectModule: pgWithKeepAlive(settings),
    logging: opts.logSql ? (sql: string) => process.stderr.write(`${sql}\n`) : false,
    pool: { max: settings.pool_max, min: 0, idle: 10_000, acquire: settings.acquire_timeout_ms },
    dialectOptions: { application_name: 'rigd', connectionTimeoutMillis: 10_000, ...(boundsAtStartup(settings) ? startupBounds(settings) : {}) },
    define: { underscored: true },
  });
  targets.set(sequelize, { url, settings });
  // A pooled connection that breaks (Sequelize then drops it from the pool) marks jobs running now as hit by the outage.
  sequelize.addHook('afterConnect', (connection: unknown) => {
    (connection as pg.Client).on('error', () => noteConnectionLost());
  });
  return sequelize;
}

/** Closes the pool. */
export async function closeSequelize(sequelize: Sequelize): Promise<void> {
  await sequelize.close();
}
