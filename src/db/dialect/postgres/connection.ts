import pg from 'pg';
import { Sequelize } from 'sequelize';
import { redactUrl } from '../../database-url.ts';
import type { ConnectOptions } from '../contract.ts';

/** Connections the pool keeps at most: the write path uses one at a time, the rest serve reads. */
export const POOL_MAX = 10;

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

const urls = new WeakMap<Sequelize, string>();

/** The URL a Sequelize instance of createSequelize was made with (for connections of their own: LISTEN, session locks). */
export function urlOf(sequelize: Sequelize): string {
  const url = urls.get(sequelize);
  if (url === undefined) throw new TypeError('not a PostgreSQL database of rigd');
  return url;
}

/** A Sequelize instance on the PostgreSQL database url names (a pool, opened lazily). */
export function createSequelize(url: string, opts: ConnectOptions = {}): Sequelize {
  setNumberParsers();
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    dialectModule: pg,
    logging: opts.logSql ? (sql: string) => process.stderr.write(`${sql}\n`) : false,
    pool: { max: POOL_MAX, min: 0, idle: 10_000, acquire: 30_000 },
    dialectOptions: { application_name: 'rigd', connectionTimeoutMillis: 10_000 },
    define: { underscored: true },
  });
  // For messages: the URL without its password.
  (sequelize as Sequelize & { rigdTarget?: string }).rigdTarget = redactUrl(url);
  urls.set(sequelize, url);
  return sequelize;
}

/** Closes the pool. */
export async function closeSequelize(sequelize: Sequelize): Promise<void> {
  await sequelize.close();
}
