// Report batches from two processes, each with its own pool (two nodes): batches of both commit at
// once and upsert overlapping rigs in opposite orders of arrival. Rigs are upserted in id order, so
// they never deadlock; and a batch that commits late never moves a rig's last_seen_at backwards.
import { spawn } from 'node:child_process';
import path from 'node:path';
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { databaseUrlFor, onPostgres, withDb } from '../../helpers/dialect.ts';
import { REPO } from '../../helpers/jobs.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const ROUNDS = 15;
const RIGS = 40;

interface WriterResult {
  failed: string[];
  sent: number;
  latest: number;
}

function writer(dataDir: string, order: 'asc' | 'desc', parity: 0 | 1): Promise<WriterResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'test', 'helpers', 'report-writer.ts'), dataDir, order, String(parity), String(ROUNDS), String(RIGS)], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as WriterResult) : reject(new Error(`report writer exited ${code}`))));
  });
}

test('two processes report the same rigs at once, in opposite orders: no deadlock, no report lost, last_seen_at the latest', async (t) => {
  const dataDir = tmpDir();
  databaseUrlFor(dataDir);
  const db = await openDatabase(...withDb(dataDir)); // migrated before the writers start
  try {
    const [a, b] = await Promise.all([writer(dataDir, 'asc', 0), writer(dataDir, 'desc', 1)]);
    t.deepEqual([...a.failed, ...b.failed], [], `no report failed (${onPostgres ? 'no deadlock between batches of two pools' : 'SQLite: one writer at a time'})`);
    t.equal(a.sent + b.sent, 2 * ROUNDS * RIGS, `${a.sent + b.sent} reports sent`);
    t.equal(await db.models.RigReport.count(), a.sent + b.sent, 'every acknowledged report is in the history');
    t.equal(await db.models.Rig.count(), RIGS, 'each rig once');
    // Each rig's state is its latest report, whichever process's batch committed last.
    const history = await db.models.RigReport.findAll({ attributes: ['rig_id', 'received_at'] });
    const newest = new Map<string, number>();
    for (const r of history) newest.set(r.rig_id, Math.max(newest.get(r.rig_id) ?? 0, new Date(r.received_at).getTime()));
    const rigs = await db.models.Rig.findAll({ attributes: ['id', 'last_seen_at'] });
    const behind = rigs.filter((r) => new Date(r.last_seen_at).getTime() !== newest.get(r.id));
    t.deepEqual(behind.map((r) => r.id), [], 'every rig\'s last_seen_at is its newest report: no late batch moved one back');
  } finally {
    await db.close();
  }
});
