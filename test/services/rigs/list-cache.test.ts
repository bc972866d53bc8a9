import test from 'tape';
import { openDatabase, type Database } from '../../../src/db/index.ts';
import { dataVersion } from '../../../src/db/reader.ts';
import { RigListCache } from '../../../src/services/rigs/list-cache.ts';
import { RigService } from '../../../src/services/rigs/service.ts';
import { testConfig } from '../../helpers/server.ts';

const T0 = new Date('2026-05-01T12:00:00.000Z');
const HOUR = 3600_000;

/** A service and a cache on one clock; the cache's age limit is an hour, so only data and status boundaries end a generation. */
async function setup(): Promise<{ db: Database; rigs: RigService; cache: RigListCache; fresh: () => RigListCache; clock: { now: Date } }> {
  const config = testConfig();
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const clock = { now: T0 };
  const now = () => clock.now;
  const fresh = () => new RigListCache(db.reader, config, { now, maxAgeMs: HOUR });
  return { db, rigs: new RigService(db, config, { now }), cache: fresh(), fresh, clock };
}

/**
 * Runs steps that claim "nothing was committed in between" where that holds: on PostgreSQL the data
 * version is the server's snapshot, which any commit on the server moves (another test file's, in a
 * database of its own), and a moved version rightly starts a new generation (nothing stale is ever
 * served). The steps run again until the version stayed the same across them; on SQLite, once.
 */
async function quietly<T>(db: Database, steps: () => Promise<T>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const before = await dataVersion(db.reader);
    const out = await steps();
    if ((await dataVersion(db.reader)) === before) return out;
    await new Promise((r) => setTimeout(r, 10 + (i % 5) * 20));
  }
  throw new Error('the database was never without a commit for the length of the steps');
}

const body = (serial: string) => ({ rig_serial: serial, gpsd_latitude: '1.5', gpsd_longitude: '2.5', local_ip: '192.168.0.9', software_version: '1.0', git_branch: 'main' });
const ids = (cache: RigListCache) => cache.body('ids', (rigs) => rigs.map((r) => `${r.id}:${r.status}`).join(','));

test('list cache: a body is built once per generation; a committed report starts the next one', async (t) => {
  const { db, rigs, fresh, clock } = await setup();
  try {
    await rigs.report('rig1', body('S-1'), '10.144.0.5');
    let builds = 0;
    let cache = fresh();
    const counted = () =>
      cache.body('counted', (list) => {
        builds++;
        return list.map((r) => r.id).join(',');
      });
    const { first, again } = await quietly(db, async () => {
      [cache, builds, clock.now] = [fresh(), 0, T0];
      const first = await counted();
      clock.now = new Date(T0.getTime() + 1000);
      return { first, again: await counted() };
    });
    t.equal(builds, 1, 'nothing changed: built once');
    t.deepEqual(again, first, 'same body and ETag');
    await rigs.report('rig2', body('S-2'), '10.144.0.6');
    const after = await counted();
    t.equal(after.body, 'rig1,rig2', 'the next listing after a report shows it');
    t.notEqual(after.etag, first.etag, 'the ETag changes with the content');
    t.match(after.etag, /^W\/"[0-9a-f]{32}"$/, 'weak ETag');
    await db.writes.run((transaction) => db.models.Rig.update({ current_project: 'p' }, { where: { id: 'rig1' }, transaction }));
    const project = await cache.body('project', (list) => list.map((r) => r.current_project ?? '-').join(','));
    t.equal(project.body, 'p,-', 'any committed write (here not a report) starts a new generation');
  } finally {
    await db.close();
  }
});

test('list cache: statuses change when time crosses a boundary, without a write', async (t) => {
  const { db, rigs, cache, clock } = await setup();
  try {
    await rigs.report('rig1', body('S-1'), '10.144.0.5');
    t.equal((await ids(cache)).body, 'rig1:online');
    clock.now = new Date(T0.getTime() + 300_000);
    t.equal((await ids(cache)).body, 'rig1:online', 'at 300 s still online');
    clock.now = new Date(T0.getTime() + 300_001);
    t.equal((await ids(cache)).body, 'rig1:stale', 'just past online_after_s: stale (the age limit is an hour)');
    clock.now = new Date(T0.getTime() + HOUR + 1);
    t.equal((await ids(cache)).body, 'rig1:offline', 'just past offline_after_s: offline');
  } finally {
    await db.close();
  }
});

test('list cache: the age limit ends a generation; a failed build is not kept', async (t) => {
  const config = testConfig();
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const clock = { now: T0 };
  const fresh = () => new RigListCache(db.reader, config, { now: () => clock.now, maxAgeMs: 1000 });
  try {
    let cache = fresh();
    const at = () => cache.body('at', (_rigs, when) => when.toISOString());
    const [first, within] = await quietly(db, async () => {
      [cache, clock.now] = [fresh(), T0];
      const first = (await at()).body;
      clock.now = new Date(T0.getTime() + 999);
      return [first, (await at()).body];
    });
    t.equal(first, T0.toISOString());
    t.equal(within, T0.toISOString(), 'within the age limit: the same body');
    clock.now = new Date(T0.getTime() + 1000);
    t.equal((await at()).body, clock.now.toISOString(), 'at the age limit: built again');
    let fail = true;
    const flaky = () =>
      cache.body('flaky', () => {
        if (fail) throw new Error('boom');
        return 'ok';
      });
    await flaky().then(
      () => t.fail('should reject'),
      (err: Error) => t.equal(err.message, 'boom', 'the build error reaches the caller'),
    );
    fail = false;
    t.equal((await flaky()).body, 'ok', 'the next request builds again');
  } finally {
    await db.close();
  }
});
