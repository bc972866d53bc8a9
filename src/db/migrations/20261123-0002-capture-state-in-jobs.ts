import { DataTypes, QueryTypes, type QueryInterface, type Transaction } from 'sequelize';
import type { Migration } from './types.ts';
import { engineOf, forEngine } from '../dialect/engine.ts';

/**
 * A capture's run state lives in its job alone. Jobs gain a generic error_code and started_at; the
 * copies on captures (state, attempts, error_code, last_error, progress, started_at, finished_at)
 * go, after their data is carried to the job:
 *
 *   capture queued / ingesting  -> job queued at once (attempts, last error and code kept)
 *   capture failed              -> job failed with the capture's error, code and finish time
 *   capture ingested            -> job queued, attempts 0, results cleared: those captures were
 *                                  only inspected, never imported, so the import runs after upgrade
 *
 * The capture row's state wins where the two disagree; a capture with no job gets one.
 */

const MOVED = ['state', 'attempts', 'error_code', 'last_error', 'progress', 'started_at', 'finished_at'] as const;

interface OldCapture {
  id: number;
  job_id: number | null;
  state: string;
  attempts: number;
  error_code: string | null;
  last_error: string | null;
  progress: string | null;
  finished_at: string | Date | null;
}

interface OldJob {
  id: number;
  attempts: number;
  max_attempts: number;
}

/** ingest.max_attempts' default, for jobs made here for captures that had none. */
const MAX_ATTEMPTS = 5;

async function carry(qi: QueryInterface, transaction: Transaction): Promise<void> {
  const db = qi.sequelize;
  const captures = await db.query<OldCapture>(
    'SELECT id, job_id, state, attempts, error_code, last_error, progress, finished_at FROM captures ORDER BY id',
    { type: QueryTypes.SELECT, transaction },
  );
  const now = new Date();
  for (const c of captures) {
    const job =
      c.job_id === null
        ? undefined
        : (await db.query<OldJob>('SELECT id, attempts, max_attempts FROM jobs WHERE id = ?', { replacements: [c.job_id], type: QueryTypes.SELECT, transaction }))[0];
    let jobId = job?.id;
    if (jobId === undefined) {
      await db.query(
        `INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_after, created_at, updated_at)
         VALUES ('capture', ?, 'queued', 0, ?, ?, ?, ?)`,
        { replacements: [JSON.stringify({ captureId: c.id }), MAX_ATTEMPTS, now, now, now], type: QueryTypes.INSERT, transaction },
      );
      // The row just inserted in this transaction, on its connection.
      const lastId = forEngine(engineOf(db), { postgres: "currval(pg_get_serial_sequence('jobs', 'id'))", sqlite: 'last_insert_rowid()' });
      const [row] = await db.query<{ id: number }>(`SELECT ${lastId} AS id`, { type: QueryTypes.SELECT, transaction });
      jobId = Number(row!.id);
      await db.query('UPDATE captures SET job_id = ? WHERE id = ?', { replacements: [jobId, c.id], transaction });
    }
    const attempts = Math.max(Number(c.attempts) || 0, job?.attempts ?? 0);
    let set: Record<string, unknown>;
    if (c.state === 'failed') {
      set = { state: 'failed', attempts, last_error: c.last_error, error_code: c.error_code, progress: c.progress, finished_at: c.finished_at ?? now };
    } else if (c.state === 'ingested') {
      set = { state: 'queued', attempts: 0, run_after: now, last_error: null, error_code: null, progress: null, finished_at: null };
      await db.query('UPDATE captures SET sha256 = NULL, tables = NULL, page_size = NULL, page_count = NULL WHERE id = ?', { replacements: [c.id], transaction });
    } else {
      // queued, or ingesting when the old version stopped: no run survives the upgrade, so queued.
      set = { state: 'queued', attempts, run_after: now, last_error: c.last_error, error_code: c.error_code, progress: c.progress, finished_at: null };
    }
    if (job && set.state === 'queued' && attempts >= job.max_attempts) set.max_attempts = attempts + 1;
    const columns = Object.keys(set);
    await db.query(`UPDATE jobs SET ${columns.map((k) => `${k} = ?`).join(', ')}, lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = ?`, {
      replacements: [...columns.map((k) => set[k] ?? null), now, jobId],
      transaction,
    });
  }
}

/** The captures table as it is left: identity and results (as in 20261122-0005, less MOVED). */
const CAPTURE_COLUMNS = {
  id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
  bucket: { type: DataTypes.STRING(63), allowNull: false },
  key: { type: DataTypes.STRING(1024), allowNull: false },
  etag: { type: DataTypes.STRING(64), allowNull: false },
  size: { type: DataTypes.BIGINT, allowNull: true },
  rig_id: { type: DataTypes.STRING(63), allowNull: true },
  project: { type: DataTypes.STRING(64), allowNull: true },
  upload_id: { type: DataTypes.INTEGER, allowNull: true },
  job_id: { type: DataTypes.INTEGER, allowNull: true },
  sha256: { type: DataTypes.STRING(64), allowNull: true },
  tables: { type: DataTypes.TEXT, allowNull: true },
  page_size: { type: DataTypes.INTEGER, allowNull: true },
  page_count: { type: DataTypes.INTEGER, allowNull: true },
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
};

const CAPTURE_INDEXES: [string, string[], boolean][] = [
  // One capture per stored object version: a repeated webhook or event finds this row.
  ['captures_object', ['bucket', 'key', 'etag'], true],
  ['captures_rig', ['rig_id', 'id'], false],
  ['captures_project', ['project', 'id'], false],
  // The join to the job that holds the capture's state.
  ['captures_job', ['job_id'], false],
];

/**
 * Drops MOVED from captures. SQLite: the table is rebuilt by hand (Sequelize's removeColumn rebuild
 * would turn the (bucket, key, etag) unique index into three single-column UNIQUE constraints and
 * drop AUTOINCREMENT), then its indexes are made again. Elsewhere: ALTER TABLE ... DROP COLUMN.
 */
async function dropMoved(qi: QueryInterface, transaction: Transaction): Promise<void> {
  await qi.removeIndex('captures', 'captures_state', { transaction });
  if (forEngine(engineOf(qi.sequelize), { postgres: true, sqlite: false })) {
    for (const column of MOVED) await qi.removeColumn('captures', column, { transaction });
    return;
  }
  const columns = Object.keys(CAPTURE_COLUMNS).map((c) => qi.quoteIdentifier(c)).join(', ');
  await qi.createTable('captures_rebuilt', CAPTURE_COLUMNS, { transaction });
  await qi.sequelize.query(`INSERT INTO captures_rebuilt (${columns}) SELECT ${columns} FROM captures`, { transaction });
  await qi.dropTable('captures', { transaction });
  await qi.renameTable('captures_rebuilt', 'captures', { transaction });
  for (const [name, fields, unique] of CAPTURE_INDEXES) await qi.addIndex('captures', fields, { name, unique, transaction });
}

export const captureStateInJobs: Migration = {
  name: '20261123-0002-capture-state-in-jobs',
  async up({ context: qi }) {
    await qi.sequelize.transaction(async (transaction) => {
      await qi.addColumn('jobs', 'error_code', { type: DataTypes.STRING(64), allowNull: true }, { transaction });
      await qi.addColumn('jobs', 'started_at', { type: DataTypes.DATE, allowNull: true }, { transaction });
      await carry(qi, transaction);
      await dropMoved(qi, transaction);
    });
  },
  async down() {
    throw new Error('20261123-0002-capture-state-in-jobs cannot be undone: restore a backup made before the upgrade (rigd restore)');
  },
};
