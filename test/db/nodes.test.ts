import { hostname } from 'node:os';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { heartbeatNode, registerNode, stopNode, type NodeIdentity } from '../../src/db/nodes.ts';
import { withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const never = () => false;
const node = (over: Partial<NodeIdentity> = {}): NodeIdentity => ({ instanceId: 'gw1:8080', hostname: 'gw1', pid: 100, version: '0.1.0', ...over });

test('a live node keeps its instance id; a stale, stopped or dead one gives it up', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    t.deepEqual(await registerNode(db, node(), 60_000, never), { registered: true }, 'the first node registers');
    const refused = await registerNode(db, node({ hostname: 'gw2', pid: 200 }), 60_000, never);
    t.equal(refused.registered, false, 'a second process with the same id is refused while the first is live');
    if (!refused.registered) t.deepEqual([refused.holder.hostname, refused.holder.pid], ['gw1', 100], 'the refusal names the live holder');
    t.equal((await registerNode(db, node({ instanceId: 'gw2:8080', hostname: 'gw2', pid: 200 }), 60_000, never)).registered, true, 'another id registers beside it');

    let asked: string | undefined;
    const gone = await registerNode(db, node({ pid: 101 }), 60_000, (holder) => ((asked = `${holder.hostname}/${holder.pid}`), true));
    t.deepEqual([gone.registered, asked], [true, 'gw1/100'], 'a holder known to be dead (same host, pid gone) is taken over at once');

    t.ok(await heartbeatNode(db, node({ pid: 101 })), 'the new holder heartbeats');
    t.notOk(await heartbeatNode(db, node({ pid: 100 })), 'the old one\'s heartbeat no longer matches its row');

    // Stale: a heartbeat older than the bound (here: any, with a bound of 0 ms).
    t.equal((await registerNode(db, node({ hostname: 'gw3', pid: 300 }), 0, never)).registered, true, 'a holder whose heartbeat is stale is taken over');

    await stopNode(db, node({ hostname: 'gw3', pid: 300 }));
    const row = await db.models.Node.findByPk('gw1:8080');
    t.ok(row?.stopped_at instanceof Date, 'a clean stop marks the node stopped');
    t.equal((await registerNode(db, node({ hostname: 'gw4', pid: 400 }), 60_000, never)).registered, true, 'a stopped node\'s id is free at once');
    const after = await db.models.Node.findByPk('gw1:8080');
    t.deepEqual([after?.hostname, after?.pid, after?.stopped_at], ['gw4', 400, null], 'the row names the new node, running');
    t.ok(after!.heartbeat_at.getTime() >= after!.started_at.getTime(), 'started and heartbeat times from the database clock');
  } finally {
    await db.close();
  }
});

test('the same process registering again (a second app in one process) is not refused', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const self = node({ hostname: hostname(), pid: process.pid });
    t.equal((await registerNode(db, self, 60_000, never)).registered, true);
    t.equal((await registerNode(db, self, 60_000, never)).registered, true, 'its own row is its own');
  } finally {
    await db.close();
  }
});
