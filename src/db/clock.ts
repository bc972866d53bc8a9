import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { engineOf, forEngine } from './dialect/engine.ts';
import type { Database } from './index.ts';

/**
 * Times the job queue stores (due, lease, finish times) come from the database's clock: on
 * PostgreSQL the server's (the claim compares with its now(), and rigd processes on several hosts
 * share one server), on SQLite the app's, as the database is a file of this host.
 */

/** Whether the engine's times are the server's clock. */
const SERVER_CLOCK = { postgres: true, sqlite: false };

/** A value for a DATE column: now + offsetMs by the database's clock (a SQL expression on PostgreSQL). */
export function dbTime(sequelize: Sequelize, offsetMs = 0): Date {
  if (!Number.isFinite(offsetMs)) throw new RangeError(`dbTime: offset ${offsetMs} ms is not a number`);
  if (!forEngine(engineOf(sequelize), SERVER_CLOCK)) return new Date(Date.now() + offsetMs);
  // Typed as a Date for the model attributes it is assigned to; Sequelize writes the expression as is.
  return sequelize.literal(`now() + make_interval(secs => ${offsetMs / 1000})`) as unknown as Date;
}

/** Now by the database's clock, read (PostgreSQL: its now(), the transaction's start when given one). */
export async function dbNow(sequelize: Sequelize, transaction?: Transaction): Promise<Date> {
  if (!forEngine(engineOf(sequelize), SERVER_CLOCK)) return new Date();
  const [row] = await sequelize.query<{ now: Date }>('SELECT now() AS now', { type: QueryTypes.SELECT, transaction });
  return new Date(row!.now);
}

/** Now by db's clock: PostgreSQL's now() (t's start when given t), this host's on SQLite. */
export function databaseNow(db: Pick<Database, 'sequelize'>, t?: Transaction): Promise<Date> {
  return dbNow(db.sequelize, t);
}
