import type { Transaction } from 'sequelize';
import { dbTime } from '../clock.ts';
import type { Job } from '../models/job.ts';

/** A new queued job. */
export interface NewJob {
  kind: string;
  /** JSON text. */
  payload: string;
  maxAttempts: number;
  /** @default now, by the database's clock */
  runAfter?: Date;
  group: string | null;
}

/** The job model of the database the transaction belongs to (each database binds its own model class). */
function jobModel(transaction: Transaction): typeof Job {
  // Sequelize keeps the instance on every Transaction; its .d.ts does not declare it.
  const { sequelize } = transaction as Transaction & { sequelize?: { model(name: string): unknown } };
  if (!sequelize) throw new TypeError('enqueue needs a Sequelize transaction');
  return sequelize.model('Job') as typeof Job;
}

/** Inserts a queued job in the caller's transaction; the row as stored. */
export function insertJob(transaction: Transaction, job: NewJob): Promise<Job> {
  const Model = jobModel(transaction);
  return Model.create(
    { kind: job.kind, payload: job.payload, max_attempts: job.maxAttempts, run_after: job.runAfter ?? dbTime(Model.sequelize!), fair_group: job.group },
    // RETURNING *: the row as stored (run_after was a SQL expression on PostgreSQL).
    { transaction, returning: true },
  );
}
