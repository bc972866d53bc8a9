// test: alone (cluster nodes killed and restarted)
// Two `rigd serve` nodes as containers run them: the same host name ("gateway"), each in its own
// PID namespace where rigd is PID 1. Host name and pid tell neither node from the other; leases
// are judged by the node registry (instance ids, heartbeats), so a stream of captures queued on
// both nodes is ingested with every job run once (no attempt burned, no lease taken), while rig
// reports keep landing, every acknowledged one a row, and /healthz says ok on both. Then a third
// process with node-a's instance id (same host name, PID 1 too) is refused rather than taking over
// the live node's place. PostgreSQL only (SQLite is one node).
import path from 'node:path';
import test from 'tape';
import { makeCapture } from '../helpers/capture-files.ts';
import { settledCapture, startCluster, WEBHOOK_TOKEN, type Cluster } from '../helpers/cluster.ts';
import { postgresOnly } from '../helpers/dialect.ts';
import { http } from '../helpers/http.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent } from '../helpers/webhook.ts';

const WHY = 'several nodes share one PostgreSQL database; on SQLite rigd is one node';
const RIG_NET = { addr: '10.144.150.2', gw: '10.144.150.1', cidr: '10.144.150.0/24' };
const CAPTURES = 10;
/** Slow reads: each import runs for seconds, across many of the other node's reclaim passes. */
const READ_BYTES_PER_S = 256 * 1024;

test('same host name, both PID 1: every capture ingested once, no attempt burned, reports all stored', async (t) => {
  if (postgresOnly(t, WHY)) return;
  let c: Cluster | undefined;
  try {
    c = await startCluster({
      sameHost: 'gateway',
      rigNet: RIG_NET,
      // Heartbeats every 2 s (live for 6): a node busy importing on a loaded machine can miss a
      // beat of a second or two and is still live, which is what the registry is asked here.
      config: { ingest: { read_bytes_per_s: READ_BYTES_PER_S, concurrency: 2, lease_s: 30 }, cluster: { heartbeat_s: 2 } },
    });
    const cl = c;
    const [a, b] = [cl.node('node-a'), cl.node('node-b')];
    const rows = await cl.query<{ instance_id: string; hostname: string; pid: number }>('SELECT instance_id, hostname, pid FROM nodes ORDER BY instance_id');
    t.deepEqual(
      rows.map((r) => [r.instance_id, r.hostname, Number(r.pid)]),
      [['node-a', 'gateway', 1], ['node-b', 'gateway', 1]],
      'both nodes registered as host "gateway", pid 1',
    );

    const add = await a.cli(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], 'ana-password-123');
    t.equal(add.code, 0, `rigd user add: ${add.stderr.trim()}`);
    const token = (await http(`${a.url}/api/v1/sessions`, { json: { login: 'ana', password: 'ana-password-123' } })).json().token as string;

    const files = tmpDir('rigd-samehost-');
    const ids: number[] = [];
    const expected = new Map<number, number>();
    for (let i = 0; i < CAPTURES; i++) {
      const made = await makeCapture(path.join(files, `c${i}.sqlite`), {
        tables: [{ name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'note', type: 'TEXT' }], rows: 20_000 + i }],
      });
      const key = `rig${i}/c${i}.sqlite`;
      const { etag, size } = await cl.putObject(key, made.path);
      const n = i % 2 === 0 ? a : b;
      const res = await http(`${n.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent(key, etag, size), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
      t.equal(res.status, 200, `capture ${i} queued on ${n.id}`);
      const id = Number(res.json().data.objects?.[0]?.capture?.id);
      ids.push(id);
      expected.set(id, made.tables[0]!.rows);
    }

    // Reports from the rigs while the imports run, half on each node.
    const reqs = [a, b].flatMap((n) =>
      Array.from({ length: 100 }, (_, i) => ({
        url: `${n.rigUrl}/api/v1/rigs/sh-rig${i % 10}`,
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `rig_serial=SN-${i % 10}&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main`,
      })),
    );
    const answers = await cl.net.requestAll('rig', reqs, { concurrency: 10 });
    const acked = answers.filter((r) => r.status === 200 && r.body === 'Ok').length;
    t.equal(acked, reqs.length, `every report answered Ok (${acked} of ${reqs.length})`);

    for (const id of ids) {
      const done = await settledCapture(a, token, id, 300_000).catch((err: Error) => ({ state: err.message }));
      t.equal(done.state, 'ingested', `capture ${id} ingested`);
    }
    const jobs = await cl.query<{ id: number; attempts: number; state: string; last_error: string | null; error_code: string | null }>(
      'SELECT j.id, j.attempts, j.state, j.last_error, j.error_code FROM jobs j JOIN captures c ON c.job_id = j.id ORDER BY j.id',
    );
    t.equal(jobs.length, CAPTURES, `${CAPTURES} jobs`);
    t.deepEqual(
      jobs.filter((j) => j.state !== 'done' || Number(j.attempts) !== 1).map((j) => `${j.id}: ${j.state} after ${j.attempts} attempts (${j.error_code}: ${j.last_error})`),
      [],
      'every job done on its first attempt: no lease taken from a live node',
    );
    for (const [id, n] of expected) {
      const [row] = await cl.query<{ n: string }>('SELECT count(*) AS n FROM rigd_captures.readings WHERE capture_id = $1', [id]);
      t.equal(Number(row!.n), n, `capture ${id}: ${n} rows, each once`);
    }
    t.doesNotMatch(cl.outputs(), /reclaimed jobs from a dead or stalled runner/, 'neither node reclaimed a job');
    const [reports] = await cl.query<{ n: string }>("SELECT count(*) AS n FROM rig_reports WHERE rig_id LIKE 'sh-rig%'");
    t.equal(Number(reports!.n), acked, 'every acknowledged report is a row, once');
    for (const n of [a, b]) {
      const health = await http(`${n.url}/healthz`);
      t.equal(health.status, 200, `${n.id}: /healthz 200 (nothing is wrong, and it says so)`);
    }

    // A third container with node-a's instance id (host "gateway", PID 1 as well): the registry's
    // heartbeats show node-a live, so it waits a few heartbeats and then refuses; node-a keeps its place.
    const twin = await a.cli(['serve', '--port', '0', '--host', '127.0.0.1']);
    t.equal(twin.code, 1, 'a second process with a live node\'s instance id exits 1');
    t.match(twin.stderr, /instance id "node-a" is taken by a live node \(gateway, pid 1, heartbeat \d+ s ago\)/, `naming the live holder: ${twin.stderr.trim()}`);
    const [still] = await cl.query<{ n: string }>("SELECT count(*) AS n FROM nodes WHERE instance_id = 'node-a' AND heartbeat_at > now() - interval '10 seconds' AND stopped_at IS NULL");
    t.equal(Number(still!.n), 1, 'node-a still holds its row and heartbeats');
    t.ok(a.running() && b.running(), 'both nodes still run');
  } catch (err) {
    t.fail(`${(err as Error).stack}\n${c ? c.outputs() : ''}`);
  } finally {
    if (c) {
      for (const n of c.nodes.filter((x) => x.running())) t.equal((await n.stop('SIGTERM')).code, 0, `${n.id}: stops cleanly on SIGTERM (as PID 1)`);
      await c.close();
    }
  }
});
