/**
 * The captures table's statements besides the first record of a version (capture-rows.ts): the
 * listings, the filters of `rigd captures`, reimport's picks. A capture's state is its job's, read
 * through the join; services hand plain values and get typed rows back.
 */
import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { Database } from './index.ts';
import type { Capture } from './models/capture.ts';
import { captureStateSql, type CaptureState } from './models/capture-state.ts';
import type { Job, JobState } from './models/job.ts';
import type { Reader } from './reader.ts';
import { sqlTime, type StoredTime } from './stored-time.ts';

/** A capture as a rig's page lists it. */
export interface RigCaptureRow {
  id: number;
  key: string;
  state: CaptureState;
  size: number | null;
  project: string | null;
  error_code: string | null;
  created_at: StoredTime;
  /** The later of the capture's and its job's. */
  updated_at: StoredTime;
}

/** A rig's newest captures (highest id first), at most `limit`, and how many it has in all. */
export async function rigCaptures(reader: Reader, rigId: string, limit: number): Promise<{ total: number; recent: RigCaptureRow[] }> {
  const [recent, count] = await Promise.all([
    reader.all<RigCaptureRow>(
      `SELECT c.id, c.key, ${captureStateSql('j')} AS state, c.size, c.project, j.error_code,
              c.created_at, CASE WHEN j.updated_at > c.updated_at THEN j.updated_at ELSE c.updated_at END AS updated_at
         FROM captures c LEFT JOIN jobs j ON j.id = c.job_id
        WHERE c.rig_id = ? ORDER BY c.id DESC LIMIT ?`,
      [rigId, limit],
    ),
    reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM captures WHERE rig_id = ?', [rigId]),
  ]);
  return { total: Number(count[0]?.n ?? 0), recent };
}

/** A capture's job, or null (none, or gone), in t when given. */
export async function captureJob(db: Database, capture: Capture, t?: Transaction): Promise<Job | null> {
  return capture.job_id ? db.models.Job.findByPk(capture.job_id, { transaction: t }) : null;
}

/** The job with this id, in t. */
export function jobById(db: Database, id: number, t: Transaction): Promise<Job | null> {
  return db.models.Job.findByPk(id, { transaction: t });
}

/** Makes job `jobId` the capture's (its latest), in t; the version queued is kept when the capture has none yet. */
export async function setCaptureJob(capture: Capture, jobId: number, versionId: string | null | undefined, t: Transaction): Promise<void> {
  await capture.update({ job_id: jobId, ...(versionId && !capture.version_id ? { version_id: versionId } : {}) }, { transaction: t });
}

/** What `rigd captures` and GET /api/v1/captures filter on; jobState null: captures without a job. */
export interface CaptureFilter {
  jobState?: JobState | null;
  rig?: string;
  project?: string;
  /** Only captures with a smaller id. */
  before?: number;
}

/** Captures with their job (`c.job`), newest first, at most `limit`. */
export function capturesWithJobs(db: Database, f: CaptureFilter, limit: number): Promise<Capture[]> {
  const where: WhereOptions<Capture> = {};
  if (f.jobState !== undefined) Object.assign(where, f.jobState === null ? { '$job.id$': null } : { '$job.state$': f.jobState });
  if (f.rig !== undefined) Object.assign(where, { rig_id: f.rig });
  if (f.project !== undefined) Object.assign(where, { project: f.project });
  if (f.before !== undefined) Object.assign(where, { id: { [Op.lt]: f.before } });
  return db.models.Capture.findAll({ where, include: [{ association: 'job', required: false }], order: [['id', 'DESC']], limit });
}

/** Capture `id` with its job (`c.job`), or null. */
export function captureWithJob(db: Database, id: number): Promise<Capture | null> {
  return db.models.Capture.findByPk(id, { include: [{ association: 'job', required: false }] });
}

/** Capture `id` in t, or null. */
export function captureById(db: Database, id: number, t: Transaction): Promise<Capture | null> {
  return db.models.Capture.findByPk(id, { transaction: t });
}

/**
 * Ids of ingested captures (their job done) with an id above `after`, of one rig and whose job
 * finished at or after `since` when given; ascending, at most `limit`.
 */
export async function ingestedCaptureIds(db: Database, f: { rig?: string; since?: Date }, after: number, limit: number): Promise<number[]> {
  const where: Record<string, unknown> = { '$job.state$': 'done' };
  if (f.rig !== undefined) where.rig_id = f.rig;
  if (f.since !== undefined) where['$job.finished_at$'] = { [Op.gte]: f.since };
  const page = await db.models.Capture.findAll({
    attributes: ['id'],
    where: { ...where, id: { [Op.gt]: after } } as WhereOptions<Capture>,
    include: [{ association: 'job', required: true, attributes: [] }],
    order: [['id', 'ASC']],
    limit,
  });
  return page.map((c) => c.id);
}

/** A capture whose job failed for good. */
export interface FailedCaptureRow {
  id: number;
  key: string;
  rig_id: string | null;
  error_code: string | null;
  last_error: string | null;
  finished_at: StoredTime | null;
}

/** Captures whose job failed for good at or after `since`, and those of `alsoIds` still failed. */
export function failedCaptures(reader: Reader, since: Date, alsoIds: number[]): Promise<FailedCaptureRow[]> {
  return reader.all<FailedCaptureRow>(
    `SELECT c.id, c.key, c.rig_id, j.error_code, j.last_error, j.finished_at FROM captures c JOIN jobs j ON j.id = c.job_id
      WHERE j.state = 'failed' AND (j.finished_at >= ?${alsoIds.length ? ` OR c.id IN (${alsoIds.map(() => '?').join(', ')})` : ''})`,
    [sqlTime(since), ...alsoIds],
  );
}

/** How many captures are queued, and since when the oldest of them is (null: none). */
export async function queuedCaptures(reader: Reader): Promise<{ n: number; oldest: Date | null }> {
  const [row] = await reader.all<{ oldest: StoredTime | null; n: number }>(
    "SELECT MIN(j.created_at) AS oldest, COUNT(*) AS n FROM captures c JOIN jobs j ON j.id = c.job_id WHERE j.state = 'queued'",
  );
  return { n: Number(row?.n ?? 0), oldest: row?.oldest ? new Date(row.oldest) : null };
}

/** Captures per capture state (read through their jobs). */
export async function captureTally(reader: Reader): Promise<Map<string, number>> {
  const rows = await reader.all<{ state: string; n: number | string }>(`SELECT ${captureStateSql('j')} AS state, COUNT(*) AS n FROM captures c LEFT JOIN jobs j ON j.id = c.job_id GROUP BY 1`);
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}
