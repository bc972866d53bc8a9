// rigd doctor's duties check: which node runs the cluster duties (upload expiry, retention, alerts).
// PostgreSQL: the node holding the duties lock, by instance id, host and pid; when it stops, the
// node that took them over; nobody holding them is a warn. SQLite: the one rigd serve runs them.
import test from 'tape';
import { rigd, doctorLine as line, type DoctorCheck } from '../helpers/cli.ts';
import { serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';



async function dutiesJson(env: Record<string, string>): Promise<{ code: number | null; duties: DoctorCheck | undefined }> {
  const res = await rigd(['doctor', '--json'], { env });
  const report = JSON.parse(res.stdout) as { checks: DoctorCheck[] };
  return { code: res.code, duties: report.checks.find((c) => c.check === 'duties') };
}

test('doctor duties: names the node that runs them, the one that takes over, and warns when nobody does', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_CLUSTER_HEARTBEAT_S: '1' };
  t.equal((await rigd(['migrate'], { env })).code, 0);
  const nodes: ServeProcess[] = [];
  try {
    if (!onPostgres) {
      const serve = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-a' });
      nodes.push(serve);
      let res = await rigd(['doctor'], { env });
      t.match(line(res.stdout, 'duties'), /^ok\s+duties\s+SQLite: the one rigd serve of this data_dir runs them \(upload expiry, retention, alerts\)$/, 'SQLite, rigd serve running: one line');
      t.equal(res.code, 0, 'exit 0');
      t.equal(await serve.stop('SIGTERM'), 0, 'rigd serve stops');
      res = await rigd(['doctor'], { env });
      t.match(line(res.stdout, 'duties'), /^ok\s+duties\s+SQLite: the one rigd serve of this data_dir runs them \(upload expiry, retention, alerts\); it is not running now$/, 'SQLite, rigd serve stopped: says it is not running');
      return;
    }
    let res = await rigd(['doctor'], { env });
    t.match(line(res.stdout, 'duties'), /^warn\s+duties\s+held by nobody: upload expiry, retention and alerts run on no node$/, 'no node: held by nobody, a warn');
    t.match(res.stdout, /fix: start rigd serve/, 'with its fix');

    const a = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-a' });
    nodes.push(a);
    const b = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' });
    nodes.push(b);
    const byId: Record<string, ServeProcess> = { 'gw-a': a, 'gw-b': b };
    const held = /^held by node (gw-a|gw-b) \((\S+), pid (\d+)\)/;
    const first = await dutiesJson(env);
    t.equal(first.code, 0, 'exit 0');
    t.equal(first.duties?.status, 'ok', `--json: ${first.duties?.message}`);
    const m = held.exec(first.duties?.message ?? '');
    t.ok(m, 'names the holder by instance id, host and pid');
    if (!m) return;
    const holder = byId[m[1]];
    t.equal(Number(m[3]), holder.child.pid, 'the pid is the holder\'s');
    const other = m[1] === 'gw-a' ? 'gw-b' : 'gw-a';

    t.equal(await holder.stop('SIGTERM'), 0, `${m[1]} stops (SIGTERM)`);
    const next = await waitFor(async () => {
      const d = (await dutiesJson(env)).duties;
      return d && held.exec(d.message)?.[1] === other ? d : null;
    }, 60_000, `doctor naming ${other}`, 500);
    t.equal(next.status, 'ok', `${other} took the duties: ${next.message}`);
    t.equal(Number(held.exec(next.message)?.[3]), byId[other].child.pid, 'with its pid');
    res = await rigd(['doctor'], { env });
    t.match(line(res.stdout, 'duties'), new RegExp(`^ok\\s+duties\\s+held by node ${other} \\(`), 'the text output names it too');

    t.equal(await byId[other].stop('SIGTERM'), 0, `${other} stops`);
    const none = await dutiesJson(env);
    t.equal(none.duties?.status, 'warn', 'no node left: warn');
    t.match(none.duties?.message ?? '', /^held by nobody/, none.duties?.message);
  } finally {
    for (const p of nodes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  }
});
