// Upgrading a database built by the previous migrations, with captures in every old state and jobs
// that disagree with them: the capture row's state wins and moves to the job; captures that were
// `ingested` (inspected only, never imported) are queued again with attempts 0 and no results; a
// capture without a job gets one; the copied columns leave captures, whose indexes stay right.
import { QueryTypes, type Sequelize } from 'sequelize';
import test from 'tape';
import { SequelizeStorage, Umzug } from 'umzug';
import { openDatabase } from '../../../src/db/index.ts';
import { MIGRATIONS_TABLE } from '../../../src/db/migrate.ts';
import { migrations } from '../../../src/db/migrations/index.ts';
import { loadDialect } from '../../../src/db/dialect/index.ts';
import { onPostgres, testDb } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const TARGET = '20261123-0002-capture-state-in-jobs';

async function migrateUpTo(sequelize: Sequelize, last: string): Promise<void> {
  const upTo = migrations.slice(0, migrations.findIndex((m) => m.name === last) + 1);
  const umzug = new Umzug({ migrations: upTo, context: sequelize.getQueryInterface(), storage: new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE }), logger: undefined });
  await umzug.up();
}

const T0 = '2026-11-20 10:00:00.000 +00:00';

async function job(sequelize: Sequelize, state: string, attempts: number, extra: { last_error?: string; lease_owner?: string } = {}): Promise<number> {
  const [row] = await sequelize.query<{ id: number }>(
    `/* job */ INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_after, lease_owner, last_error, created_at, updated_at)
     VALUES ('capture', '{}', ?, ?, 3, ?, ?, ?, ?, ?) RETURNING id`,
    { replacements: [state, attempts, T0, extra.lease_owner ?? null, extra.last_error ?? null, T0, T0], type: QueryTypes.SELECT },
  );
  return row!.id;
}

async function capture(sequelize: Sequelize, key: string, state: string, jobId: number | null, extra: Record<string, unknown> = {}): Promise<number> {
  const values: Record<string, unknown> = { bucket: 'captures', key, etag: `e-${key}`, size: 100, job_id: jobId, state, attempts: 0, created_at: T0, updated_at: T0, ...extra };
  const cols = Object.keys(values);
  const [row] = await sequelize.query<{ id: number }>(
    `/* capture */ INSERT INTO captures (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) RETURNING id`,
    { replacements: cols.map((c) => values[c] ?? null), type: QueryTypes.SELECT },
  );
  return row!.id;
}

test('an old database with captures in every state: upgraded, the capture row winning', async (t) => {
  const dir = tmpDir();
  const dialect = await loadDialect();
  const old = dialect.connect(dir, testDb(dir));
  await migrateUpTo(old, '20261123-0001-rig-reports-by-version');
  const ids: Record<string, number> = {};
  // ingested (only inspected): its done job goes back to queued, attempts 0, results cleared.
  ids.ingested = await capture(old, 'a.sqlite', 'ingested', await job(old, 'done', 2, { last_error: 'old retry' }), {
    attempts: 2, sha256: 'ab'.repeat(32), tables: '[{"name":"t","columns":[],"rows":3}]', page_size: 4096, page_count: 2, finished_at: T0,
  });
  // failed on the capture, but its job says done (the old copies disagreed): failed wins, with its code.
  ids.failed = await capture(old, 'b.sqlite', 'failed', await job(old, 'done', 1), { attempts: 1, error_code: 'not_sqlite', last_error: 'not a SQLite database', finished_at: T0 });
  // failed with a failed job (the sweep's case): kept failed.
  ids.failedBoth = await capture(old, 'c.sqlite', 'failed', await job(old, 'failed', 3, { last_error: 'gave up after 3 attempts: x' }), { attempts: 3, error_code: 'storage_error', last_error: 'gave up after 3 attempts: x' });
  // queued with a retry's error, its job queued.
  ids.queued = await capture(old, 'd.sqlite', 'queued', await job(old, 'queued', 1, { last_error: 'storage down' }), { attempts: 1, error_code: 'storage_error', last_error: 'storage down' });
  // ingesting when the old version stopped: its job running under a dead lease -> queued, attempts kept.
  ids.ingesting = await capture(old, 'e.sqlite', 'ingesting', await job(old, 'running', 2, { lease_owner: 'old-host/1/aa' }), { attempts: 2 });
  // queued but no job at all (a lost job): one is made.
  ids.orphan = await capture(old, 'f.sqlite', 'queued', null);
  await dialect.close(old);

  const db = await openDatabase(dir, testDb(dir));
  try {
    const read = async (id: number) => {
      const c = await db.models.Capture.findByPk(id, { include: [{ association: 'job', required: false }] });
      return { c: c!, j: c!.job! };
    };
    const ingested = await read(ids.ingested);
    t.deepEqual([ingested.j.state, ingested.j.attempts, ingested.j.last_error, ingested.j.error_code], ['queued', 0, null, null], 'ingested (inspected only): job queued again, attempts 0, no error');
    t.deepEqual([ingested.c.sha256, ingested.c.tables, ingested.c.page_size, ingested.c.page_count], [null, null, null, null], 'its inspection results cleared: the import fills them');
    t.ok(ingested.j.run_after.getTime() <= Date.now(), 'due at once');

    const failed = await read(ids.failed);
    t.deepEqual([failed.j.state, failed.j.error_code, failed.j.last_error, failed.j.attempts], ['failed', 'not_sqlite', 'not a SQLite database', 1], 'failed capture, done job: the capture wins');
    t.ok(failed.j.finished_at, 'finished_at carried');
    const both = await read(ids.failedBoth);
    t.deepEqual([both.j.state, both.j.error_code, both.j.attempts], ['failed', 'storage_error', 3], 'failed both: failed, with the capture\'s code');

    const queued = await read(ids.queued);
    t.deepEqual([queued.j.state, queued.j.attempts, queued.j.error_code, queued.j.last_error], ['queued', 1, 'storage_error', 'storage down'], 'queued: attempts, error and code kept');
    const ingesting = await read(ids.ingesting);
    t.deepEqual([ingesting.j.state, ingesting.j.attempts, ingesting.j.lease_owner], ['queued', 2, null], 'ingesting: queued again, lease cleared, attempts kept');

    const orphan = await read(ids.orphan);
    t.ok(orphan.c.job_id, 'a capture without a job gets one');
    t.deepEqual([orphan.j.kind, JSON.parse(orphan.j.payload), orphan.j.state], ['capture', { captureId: ids.orphan }, 'queued'], 'a capture job for it, queued');

    const columns = Object.keys(await db.sequelize.getQueryInterface().describeTable('captures'));
    for (const gone of ['state', 'attempts', 'error_code', 'last_error', 'progress', 'started_at', 'finished_at']) t.notOk(columns.includes(gone), `captures.${gone} is gone`);
    t.ok(['sha256', 'tables', 'page_size', 'page_count', 'job_id', 'etag'].every((c) => columns.includes(c)), 'identity and results stay');
    const jobColumns = Object.keys(await db.sequelize.getQueryInterface().describeTable('jobs'));
    t.ok(jobColumns.includes('error_code') && jobColumns.includes('started_at'), 'jobs gain error_code and started_at');

    if (onPostgres) {
      // PostgreSQL drops the columns in place: the same indexes, the serial id untouched.
      const idx = await db.sequelize.query<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'captures'", { type: QueryTypes.SELECT });
      t.match(idx.find((r) => r.indexname === 'captures_object')?.indexdef ?? '', /CREATE UNIQUE INDEX captures_object ON public\.captures USING btree \(bucket, key, etag\)/, 'one capture per (bucket, key, etag)');
      t.deepEqual(idx.map((r) => r.indexname).filter((n) => n.startsWith('captures_') && n !== 'captures_pkey').sort(), ['captures_job', 'captures_object', 'captures_project', 'captures_rig'], 'the indexes, captures_state gone');
    } else {
      const schema = await db.sequelize.query<{ name: string; sql: string | null }>("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'captures'", { type: QueryTypes.SELECT });
      const table = schema.find((r) => r.name === 'captures')!.sql ?? '';
      t.match(table, /AUTOINCREMENT/, 'ids still AUTOINCREMENT');
      t.doesNotMatch(table, /UNIQUE/, 'no single-column UNIQUE constraints');
      t.match(schema.find((r) => r.name === 'captures_object')?.sql ?? '', /CREATE UNIQUE INDEX `captures_object` ON `captures` \(`bucket`, `key`, `etag`\)/, 'one capture per (bucket, key, etag)');
      t.deepEqual(schema.map((r) => r.name).filter((n) => n.startsWith('captures_')).sort(), ['captures_job', 'captures_object', 'captures_project', 'captures_rig'], 'the indexes, captures_state gone');
    }
    const [applied] = await db.sequelize.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${MIGRATIONS_TABLE} WHERE name = ?`, { replacements: [TARGET], type: QueryTypes.SELECT });
    t.equal(Number(applied!.n), 1, 'recorded as applied');

    // Same version again: the unique index still refuses a second row.
    const again = await db.models.Capture.create({ bucket: 'captures', key: 'a.sqlite', etag: 'e-a.sqlite', size: 1, rig_id: null, project: null, upload_id: null }).then(
      () => 'inserted',
      (err: Error) => err.name,
    );
    t.equal(again, 'SequelizeUniqueConstraintError', 'a duplicate version is refused by the index');
  } finally {
    await db.close();
  }
});
