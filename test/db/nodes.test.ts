import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { heartbeatNode, registerNode, stopNode, type NodeIdentity } from '../../src/db/nodes.ts';
import { withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const node = (over: Partial<NodeIdentity> = {}): NodeIdentity => ({ instanceId: 'gw1:8080', runId: 'run-1', hostname: 'gateway', pid: 1, version: '0.1.0', ...over });
const live = { staleMs: 60_000 };

test('a live node keeps its instance id, whatever its host name and pid; a stale or stopped one gives it up', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    t.deepEqual(await registerNode(db, node(), live), { registered: true }, 'the first node registers');
    // Another container: same host name, same pid (PID 1), another run.
    const twin = node({ runId: 'run-2' });
    const refused = await registerNode(db, twin, live);
    t.equal(refused.registered, false, 'a second run with the same id, host name and pid is refused while the first is live');
    if (!refused.registered) t.deepEqual([refused.holder.instanceId, refused.holder.runId], ['gw1:8080', 'run-1'], 'the refusal names the live holder');
    t.ok(await heartbeatNode(db, node()), 'the holder still heartbeats: its row is its own');
    t.notOk(await heartbeatNode(db, twin), 'the twin\'s heartbeat matches no row');
    t.equal((await registerNode(db, node({ instanceId: 'gw2:8080', runId: 'run-3' }), live)).registered, true, 'another id registers beside it (PostgreSQL: several nodes)');

    // Stale: a heartbeat older than the bound (here: any, with a bound of 0 ms).
    t.equal((await registerNode(db, twin, { staleMs: 0 })).registered, true, 'a holder whose heartbeat is stale is taken over');
    t.notOk(await heartbeatNode(db, node()), 'the old run\'s heartbeat no longer matches the row');
    t.ok(await heartbeatNode(db, twin), 'the new run heartbeats');

    await stopNode(db, twin);
    const row = await db.models.Node.findByPk('gw1:8080');
    t.ok(row?.stopped_at instanceof Date, 'a clean stop marks the node stopped');
    t.equal((await registerNode(db, node({ runId: 'run-4', hostname: 'gw4', pid: 400 }), live)).registered, true, 'a stopped node\'s id is free at once');
    const after = await db.models.Node.findByPk('gw1:8080');
    t.deepEqual([after?.run_id, after?.hostname, after?.pid, after?.stopped_at], ['run-4', 'gw4', 400, null], 'the row names the new run, running');
    t.ok(after!.heartbeat_at.getTime() >= after!.started_at.getTime(), 'started and heartbeat times from the database clock');
  } finally {
    await db.close();
  }
});

test('the same run registering again (a second app in one process) is not refused', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    t.equal((await registerNode(db, node(), live)).registered, true);
    t.equal((await registerNode(db, node(), live)).registered, true, 'its own row is its own');
  } finally {
    await db.close();
  }
});

test('sole (the process holds the SQLite data_dir\'s serve lock): every other node left running is marked stopped', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    t.equal((await registerNode(db, node(), live)).registered, true, 'the first node registers');
    // Killed: its heartbeat still fresh, but the next serve holds the lock, so it is gone.
    const next = node({ instanceId: 'gw1:9090', runId: 'run-2', pid: 2 });
    t.equal((await registerNode(db, next, { ...live, sole: true })).registered, true, 'the sole node registers');
    const old = await db.models.Node.findByPk('gw1:8080');
    t.ok(old?.stopped_at instanceof Date, 'the one left running is marked stopped (its jobs are reclaimed at once)');
    t.equal((await registerNode(db, node({ runId: 'run-3' }), { ...live, sole: true })).registered, true, 'the same id is taken over as well');
  } finally {
    await db.close();
  }
});
