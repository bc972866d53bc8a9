// test: alone (two-node cluster faults)
// Two `rigd serve` processes as one service (README "Several nodes as one service"): one PostgreSQL
// database, one S3 peer (s3rver), rigs reporting from a network namespace. Both start at the same
// moment on an empty database; reports split across them all land; a token from node A works on
// node B; both seal cookies with the one secret in the database; the login throttle holds across
// them; 40 duplicate webhooks split across them make one capture; /metrics and `rigd doctor` name
// the nodes; kill -9 of the node running an import, and the other one finishes it, every row
// imported once. PostgreSQL only (SQLite is always one node).
import path from 'node:path';
import Iron from '@hapi/iron';
import test, { type Test } from 'tape';
import { makeCapture, type MadeCapture } from '../helpers/capture-files.ts';
import { settledCapture, startCluster, WEBHOOK_TOKEN, type Cluster, type ClusterNode } from '../helpers/cluster.ts';
import { SESSION_COOKIE } from '../../src/server/plugins/auth.ts';
import { postgresOnly } from '../helpers/dialect.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent } from '../helpers/webhook.ts';

const WHY = 'several nodes share one PostgreSQL database; on SQLite rigd is one node';
const MAX_FAILURES_PER_LOGIN = 5;
/** The import's read rate: a capture of a few MB takes seconds to fetch on either node. */
const READ_BYTES_PER_S = 2 * 1024 * 1024;
const files = tmpDir('rigd-cluster-files-');
let c: Cluster;
let a: ClusterNode;
let b: ClusterNode;
const passwords = { ana: 'ana-password-123', bob: 'bob-password-123' };

const setup = fixture(async () => {
  c = await startCluster({
    config: {
      auth: { max_failures_per_login: MAX_FAILURES_PER_LOGIN, max_failures_per_client: 1000, failure_window_s: 600 },
      ingest: { read_bytes_per_s: READ_BYTES_PER_S, concurrency: 1 },
    },
    start: false,
  });
  [a, b] = [c.node('node-a'), c.node('node-b')];
});

const statuses = (answers: { status: number }[]) => answers.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
const login = (n: ClusterNode, name: string, password: string) => http(`${n.url}/api/v1/sessions`, { json: { login: name, password } });
const count = async (sql: string, params: unknown[] = []) => Number((await c.query<{ n: string }>(sql, params))[0]!.n);

/** Runs a query the merged node work adds (its table may not exist yet): the rows, or the error's text. */
async function tryQuery<T>(sql: string): Promise<T[] | string> {
  try {
    return await c.query<T>(sql);
  } catch (err) {
    return (err as Error).message;
  }
}

function failOutputs(t: Test, err: unknown) {
  t.fail(`${(err as Error).message}\n${c ? c.outputs() : ''}`);
}

test('two nodes start at the same moment on an empty database: migrated once, both serve, both heartbeat', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  t.equal(await count("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'"), 0, 'the database is empty');
  try {
    await Promise.all(c.nodes.map((n) => n.start()));
  } catch (err) {
    return failOutputs(t, err);
  }
  t.ok(a.running() && b.running(), 'both print their listening line and keep running');
  const names = await c.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
  t.equal(new Set(names.map((r) => r.name)).size, names.length, `${names.length} migrations, each recorded once`);
  t.doesNotMatch(a.output() + b.output(), /"level":(50|60|"error"|"fatal")[,}]/, 'no error in either log');
  for (const n of c.nodes) {
    const health = await http(`${n.url}/healthz`);
    t.equal(health.status, 200, `${n.id}: /healthz 200 ${health.text.slice(0, 200)}`);
  }
  // Heartbeats every second (cluster.heartbeat_s 1): both rows soon, however busy the machine.
  let text = '';
  const both = await waitFor(
    async () => {
      const nodes = await tryQuery<Record<string, unknown>>('SELECT * FROM nodes');
      text = JSON.stringify(nodes);
      return typeof nodes !== 'string' && /"node-a"/.test(text) && /"node-b"/.test(text);
    },
    60_000,
    'both nodes in the nodes table',
    250,
  ).catch(() => false);
  t.ok(both, `the nodes table has node-a and node-b: ${text.slice(0, 400)}`);
});

test('rig reports split across the nodes: every Ok is a row', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const RIGS = 20;
  const PER_NODE = 200;
  const reqs = c.nodes.flatMap((n) =>
    Array.from({ length: PER_NODE }, (_, i) => ({
      url: `${n.rigUrl}/api/v1/rigs/cl-rig${i % RIGS}`,
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `rig_serial=SN-${i % RIGS}&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main`,
    })),
  );
  const answers = await c.net.requestAll('rig', reqs, { concurrency: 40 });
  t.deepEqual(statuses(answers), { 200: reqs.length }, `${reqs.length} x 200 from the rigs' namespace, half on each node`);
  t.ok(answers.every((r) => r.body === 'Ok'), 'each answered Ok');
  t.equal(await count("SELECT count(*) AS n FROM rig_reports WHERE rig_id LIKE 'cl-rig%'"), reqs.length, 'every acknowledged report is a row');
  t.equal(await count("SELECT count(*) AS n FROM rigs WHERE id LIKE 'cl-rig%'"), RIGS, `${RIGS} rigs`);
});

test('a token from node A works on node B, and ending it on B ends it on A', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  for (const name of ['ana', 'bob'] as const) {
    const add = await a.cli(['user', 'add', name, '--email', `${name}@example.com`, '--password-stdin'], passwords[name]);
    t.equal(add.code, 0, `rigd user add ${name} (node-a's config): ${add.stderr.trim()}`);
  }
  const res = await login(a, 'ana', passwords.ana);
  t.equal(res.status, 200, 'ana logs in on node A');
  const token = res.json().token as string;
  const onB = await http(`${b.url}/api/v1/captures`, { headers: { authorization: token } });
  t.equal(onB.status, 200, `node B takes node A's token (Authorization) ${onB.text.slice(0, 200)}`);
  const cookie = await http(`${b.url}/api/v1/captures`, { headers: { cookie: `token=${token}` } });
  t.equal(cookie.status, 200, "node B takes node A's token cookie");
  const out = await http(`${b.url}/api/v1/sessions`, { method: 'DELETE', headers: { authorization: token } });
  t.equal(out.status, 200, 'log out on node B');
  const after = await http(`${a.url}/api/v1/captures`, { headers: { authorization: token } });
  t.equal(after.status, 401, 'node A refuses the token ended on node B');
});

test('one cookie secret for both nodes: each seals its session cookie with the one in the database', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const sealed = await Promise.all(
    c.nodes.map(async (n) => {
      const session = (await login(n, 'ana', passwords.ana)).json();
      // Storing her settings sets the interface's cookies (README "HTTP interface").
      const res = await http(`${n.url}/api/v1/users/${session.data.user.id}`, { method: 'PUT', json: { user: { rig_ui_settings: { on: n.id } } }, headers: { authorization: session.token } });
      const cookie = res.cookies.find((x) => x.startsWith(`${SESSION_COOKIE}=`));
      return cookie ? cookie.slice(SESSION_COOKIE.length + 1).split(';')[0]! : '';
    }),
  );
  t.ok(sealed.every((v) => v !== ''), 'both nodes set the session cookie (PUT /api/v1/users/:id)');
  const secrets = await tryQuery<{ value: string }>('SELECT value FROM secrets');
  t.equal(typeof secrets === 'string' ? secrets : secrets.length, 1, 'one secret in the database');
  if (typeof secrets === 'string' || secrets.length !== 1) return;
  for (const [i, n] of c.nodes.entries()) {
    const opened = await Iron.unseal(sealed[i]!, secrets[0]!.value, Iron.defaults).catch((err: Error) => err.message);
    t.ok(typeof opened === 'object' && opened !== null && 'sid' in opened, `${n.id}'s cookie opens with it: ${JSON.stringify(opened)}`);
  }
});

test('the login throttle holds across nodes: 40 wrong passwords split across them, max_failures_per_login reach bcrypt', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => login(i % 2 ? b : a, 'bob', 'wrong-password')));
  t.deepEqual(statuses(answers), { 401: MAX_FAILURES_PER_LOGIN, 429: 40 - MAX_FAILURES_PER_LOGIN }, `${MAX_FAILURES_PER_LOGIN} x 401 in all, the rest 429`);
  for (const n of c.nodes) {
    const right = await login(n, 'bob', passwords.bob);
    t.equal(right.status, 429, `${n.id}: the right password is refused while bob is throttled`);
  }
  const ana = await login(b, 'ana', passwords.ana);
  t.equal(ana.status, 200, 'another user still logs in');
});

test('40 concurrent duplicate webhooks split across the nodes: one capture, one job, 0 errors', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const made = await makeCapture(path.join(files, 'dup.sqlite'), { tables: [{ name: 'dup_rows', columns: [{ name: 'a', type: 'INTEGER' }], rows: 100 }] });
  const key = 'dup/one.sqlite';
  const { etag, size } = await c.putObject(key, made.path);
  const token = (await login(a, 'ana', passwords.ana)).json().token as string;
  const url = `http://${c.s3.endpoint}:${c.s3.port}/captures/${key}`;
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) => {
      const n = i % 2 ? b : a;
      const hook = (body: unknown, authorization: string) => http(`${n.url}/api/v1/webhooks/capture_uploaded`, { json: body, headers: { authorization, accept: 'application/json' } });
      return i % 4 < 2 ? hook({ url }, token) : hook(minioEvent(key, etag, size), `Bearer ${WEBHOOK_TOKEN}`);
    }),
  );
  t.deepEqual(statuses(answers), { 200: 40 }, `40 x 200, no error ${answers.find((r) => r.status !== 200)?.text.slice(0, 200) ?? ''}`);
  const ids = new Set(answers.filter((r) => r.status === 200).map((r) => JSON.stringify(r.json().data.capture?.id ?? r.json().data.objects?.[0]?.capture?.id)));
  t.equal(ids.size, 1, `every answer names the same capture (${[...ids].join(', ')})`);
  t.equal(await count('SELECT count(*) AS n FROM captures WHERE key = $1', [key]), 1, 'one capture row');
  const id = Number([...ids][0]);
  t.equal(await count("SELECT count(*) AS n FROM jobs WHERE kind = 'capture' AND payload::jsonb->>'captureId' = $1", [String(id)]), 1, 'one job');
  const done = await settledCapture(b, token, id, 60_000).catch((err: Error) => err);
  t.equal(done instanceof Error ? done.message : done.state, 'ingested', 'it is ingested');
  t.equal(await count('SELECT count(*) AS n FROM rigd_captures.dup_rows WHERE capture_id = $1', [id]), 100, 'its 100 rows, once');
});

test('/metrics of each node carries its instance label', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  for (const n of c.nodes) {
    const res = await http(`${n.url}/metrics`);
    t.equal(res.status, 200, `${n.id}: /metrics 200`);
    const samples = res.text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    const other = c.nodes.find((x) => x !== n)!.id;
    t.ok(samples.some((l) => l.startsWith('rigd_')), `${n.id}: rigd_ series`);
    const unlabelled = samples.filter((l) => !l.includes(`instance="${n.id}"`));
    t.deepEqual(unlabelled.slice(0, 3), [], `${n.id}: every series has instance="${n.id}" (${unlabelled.length} without)`);
    t.notOk(res.text.includes(`instance="${other}"`), `${n.id}: no series of ${other}`);
  }
});

test("rigd doctor --json (node-a's config) lists both live nodes with their last heartbeat", async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const res = await a.cli(['doctor', '--json']);
  let report: { checks: { check: string; status: string; message: string }[] } | undefined;
  try {
    report = JSON.parse(res.stdout);
  } catch {
    return t.fail(`doctor --json printed no JSON: ${res.stdout.slice(0, 300)} ${res.stderr.slice(0, 300)}`);
  }
  const nodes = report!.checks.find((x) => x.check === 'nodes');
  t.equal(nodes?.status, 'ok', `a nodes check, ok: ${JSON.stringify(nodes)}`);
  const text = JSON.stringify(nodes ?? null);
  t.ok(text.includes('node-a') && text.includes('node-b'), 'it names node-a and node-b');
});

interface JobRow {
  id: number;
  state: string;
  attempts: number;
  lease_owner: string | null;
  progress: string | null;
}

test('kill -9 of the node running an import: the other node finishes it, attempts 2, every row once', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const made: MadeCapture = await makeCapture(path.join(files, 'big.sqlite'), {
    tables: [
      { name: 'big_readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'sensor', type: 'TEXT' }, { name: 'value', type: 'REAL' }, { name: 'taken_at', type: 'INTEGER' }], rows: 150_000 },
      { name: 'big_events', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'kind', type: 'TEXT' }], rows: 50_000 },
    ],
  });
  const key = 'rig7/big.sqlite';
  const { etag, size } = await c.putObject(key, made.path);
  const token = (await login(a, 'ana', passwords.ana)).json().token as string;
  const res = await http(`${a.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent(key, etag, size), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
  t.equal(res.status, 200, 'queued by a webhook to node A');
  const id = Number(res.json().data.objects?.[0]?.capture?.id);
  const jobSql = 'SELECT id, state, attempts, lease_owner, progress FROM jobs WHERE id = (SELECT job_id FROM captures WHERE id = $1)';
  // Mid-import: the running node reports rows written in its (open) import transaction.
  const running = await waitFor(
    async () => {
      const [job] = await c.query<JobRow>(jobSql, [id]);
      if (job && job.state !== 'queued' && job.state !== 'running') return job;
      const progress = job?.progress ? (JSON.parse(job.progress) as { step?: string; rows?: number }) : null;
      return job?.state === 'running' && progress?.step === 'import' && Number(progress.rows) > 0 ? job : null;
    },
    120_000,
    'the import to be under way',
    25,
  ).catch((err: Error) => err);
  if (running instanceof Error || running.state !== 'running') return t.fail(`no import under way to kill: ${running instanceof Error ? running.message : JSON.stringify(running)}\n${c.outputs()}`);
  // The node named by the lease ("<instance id>/<host>/<pid>/<random>"), or the one whose pid it carries.
  const owner = String(running.lease_owner);
  const victim = c.nodes.find((n) => owner.startsWith(`${n.id}/`)) ?? c.nodes.find((n) => owner.includes(`/${n.pid()}/`));
  if (!victim) return t.fail(`the lease owner ${owner} names no node`);
  const survivor = c.nodes.find((n) => n !== victim)!;
  t.ok(owner.startsWith(`${victim.id}/`), `the lease names the instance running it: ${owner}`);
  const killed = await victim.stop('SIGKILL');
  t.equal(killed.signal, 'SIGKILL', `${victim.id} killed -9 mid-import (${JSON.parse(running.progress!).rows} rows written)`);
  const done = await settledCapture(survivor, token, id, 180_000).catch((err: Error) => err);
  t.equal(done instanceof Error ? done.message : done.state, 'ingested', `${survivor.id} finished it`);
  const [job] = await c.query<JobRow>(jobSql, [id]);
  t.deepEqual([job?.state, job?.attempts], ['done', 2], 'the job done, attempt 2');
  for (const table of made.tables) {
    const rows = await count(`SELECT count(*) AS n FROM rigd_captures."${table.name}" WHERE capture_id = $1`, [id]);
    t.equal(rows, table.rows, `${table.name}: ${table.rows} rows, each once`);
  }
  t.ok(survivor.running(), `${survivor.id} kept serving`);
  t.equal(await count("SELECT count(*) AS n FROM rig_reports WHERE rig_id LIKE 'cl-rig%'"), 400, 'the reports acknowledged earlier are all still there');
});

test('teardown: the surviving nodes stop cleanly on SIGTERM', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  for (const n of c.nodes.filter((x) => x.running())) {
    const { code } = await n.stop('SIGTERM');
    t.equal(code, 0, `${n.id}: exit 0`);
  }
  await c.close();
});
