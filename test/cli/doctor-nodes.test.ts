// rigd doctor's nodes check: the live nodes by instance id with their last heartbeat; a node that
// stopped answering without a clean stop makes it a warn; a cleanly stopped one is not listed.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { rigd, doctorLine as line } from '../helpers/cli.ts';
import { clockFrom } from '../helpers/clock-from.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';


/** Moves a node's heartbeat back by `s` seconds, as if it had gone quiet then; resolves with the moment it is measured from. */
async function ageHeartbeat(dataDir: string, id: string, s: number): Promise<number> {
  const db = await openDatabase(...withDb(dataDir));
  try {
    const row = await db.models.Node.findByPk(id);
    const from = Date.now();
    await db.writes.run((transaction) => row!.update({ heartbeat_at: new Date(from - s * 1000) }, { transaction }));
    return from;
  } finally {
    await db.close();
  }
}

test('doctor nodes: none, one live, one gone quiet, one stopped cleanly', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8' };
  t.equal((await rigd(['migrate'], { env })).code, 0);
  let res = await rigd(['doctor'], { env });
  t.match(line(res.stdout, 'nodes'), /^ok\s+nodes\s+no live node \(rigd serve is not running\)$/, 'a fresh install: no node');

  const a = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-a' });
  // SQLite: one rigd serve per data_dir, so gw-b runs (and stops cleanly) before gw-a starts.
  const b = onPostgres ? await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' }) : null;
  try {
    res = await rigd(['doctor', '--json'], { env });
    const nodes = (JSON.parse(res.stdout) as { checks: { check: string; status: string; message: string }[] }).checks.find((c) => c.check === 'nodes');
    t.equal(nodes?.status, 'ok', '--json: live nodes are ok');
    if (b) {
      t.match(nodes?.message ?? '', new RegExp(`^2 live: gw-a \\(.+, pid ${a.child.pid}, rigd \\S+, heartbeat \\d+ s ago\\); gw-b \\(.+, pid ${b.child.pid}, `), 'each live node named with its pid, version and last heartbeat');
      t.equal(await b.stop(), 0, 'gw-b stops cleanly');
    } else {
      t.match(nodes?.message ?? '', new RegExp(`^1 live: gw-a \\(.+, pid ${a.child.pid}, rigd \\S+, heartbeat \\d+ s ago\\)$`), 'the live node named with its pid, version and last heartbeat');
      const second = await rigd(['serve', '--port', '0', '--host', '127.0.0.1'], { env: { ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' } });
      t.equal(second.code, 1, 'SQLite: gw-b on the same data_dir is refused');
      // A node that ran here earlier and stopped cleanly.
      const db = await openDatabase(...withDb(dataDir));
      const at = new Date();
      await db.writes.run((transaction) => db.models.Node.create({ instance_id: 'gw-b', run_id: 'r', hostname: 'gw', pid: 2, version: '0.1.0', started_at: at, heartbeat_at: at, stopped_at: at }, { transaction }));
      await db.close();
    }
    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));
    // The doctor's clock starts when the heartbeat was aged: "2 min ago" however slowly it starts.
    const aged = await ageHeartbeat(dataDir, 'gw-a', 120);
    res = await rigd(['doctor'], { env: { ...env, ...clockFrom(aged) } });
    t.match(line(res.stdout, 'nodes'), /^warn\s+nodes\s+no live node \(rigd serve is not running\); no longer live without a clean stop: gw-a \(.+heartbeat 2 min ago\)$/, 'the killed node, quiet for 2 minutes: warn, naming it');
    t.notOk(line(res.stdout, 'nodes').includes('gw-b'), 'the cleanly stopped node is not listed');
    t.match(res.stdout, /fix: see that node's journal/, 'with its fix');

    await ageHeartbeat(dataDir, 'gw-a', 2 * 86_400);
    res = await rigd(['doctor'], { env });
    t.match(line(res.stdout, 'nodes'), /^ok\s+nodes\s+no live node/, 'a node quiet for over a day is no longer listed');
  } finally {
    for (const p of [a, b]) if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  }
});
