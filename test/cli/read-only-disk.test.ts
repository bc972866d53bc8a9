// test: alone (loop-mounted ext4 turned read-only under a running serve)
// A disk that fails under rigd serve, for real: data_dir on a loop-mounted ext4 with
// errors=remount-ro (Debian's default), and a file system error raised through
// /sys/fs/ext4/<dev>/trigger_fs_error, so the kernel turns the file system read-only under the
// running process. /healthz turns 503 by itself (its probe writes and syncs in data_dir); on
// SQLite, reports, logins and reservations answer 503 database_read_only (never 500); doctor names
// the read-only file system and the serve that still runs. After a check and a remount, every
// acknowledged write is there exactly once. On PostgreSQL the database lives elsewhere: writes go on,
// and /healthz still says data_dir is broken. Needs root (mount, namespaces).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { freePort, serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { tmpDir } from '../helpers/tmp.ts';

const RIG = { name: 'rig', addr: '10.144.153.2', gw: '10.144.153.1' };
const PASSWORD = 'ana-password-123';


const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

test('ext4 remounted read-only under rigd serve: 503 with the right code, /healthz 503, doctor says so, nothing acknowledged lost', async (t) => {
  const work = tmpDir('rigd-rodisk-');
  const image = path.join(work, 'disk.img');
  const mnt = path.join(work, 'mnt');
  mkdirSync(mnt);
  writeFileSync(image, '');
  // Room above the reservation floor (server.min_free_mb + uploads.database_reserve_mb = 128 MiB by default).
  sh('truncate', ['-s', '256M', image]);
  sh('mkfs.ext4', ['-q', '-F', image]);
  sh('mount', ['-o', 'loop,errors=remount-ro', image, mnt]);
  let mounted = true;
  const dataDir = path.join(mnt, 'data');
  mkdirSync(dataDir);
  const port = await freePort();
  const base = `http://${RIG.gw}:${port}`;
  const env = { RIGD_DATA_DIR: dataDir, RIGD_STORAGE_PUBLIC_URL: base, RIGD_CLUSTER_HEARTBEAT_S: '1' };
  let server: ServeProcess | undefined;
  let hosts: Hosts | undefined;
  const rigHeaders = { host: `${RIG.gw}:${port}` };
  try {
    const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: PASSWORD });
    t.equal(add.code, 0, 'a user (acknowledged)');
    server = await serveProcess(env, ['--port', String(port), '--host', '0.0.0.0']);
    const srv = server;
    hosts = await createHosts([RIG]);
    const h = hosts;
    const report = (i: number) =>
      h.request('rig', {
        url: `${base}/api/v1/rigs/ro-rig${i % 3}`,
        method: 'PUT',
        headers: { ...rigHeaders, 'content-type': 'application/x-www-form-urlencoded' },
        body: `rig_serial=SN-${i % 3}&gpsd_latitude=47.${i}&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main`,
      });
    const reserve = (key: string) => h.request('rig', { url: `${base}/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=100`, headers: rigHeaders });
    const login = () => http(`${srv.url}/api/v1/sessions`, { json: { login: 'ana', password: PASSWORD } });

    let acked = 0;
    for (let i = 0; i < 30; i++) if ((await report(i)).status === 200) acked++;
    t.equal(acked, 30, '30 reports acknowledged before the fault');
    t.equal((await reserve('ro-rig0/before.sqlite')).status, 200, 'a reservation acknowledged before the fault');
    t.equal((await login()).status, 200, 'a login before the fault');
    t.equal((await http(`${srv.url}/healthz`)).status, 200, '/healthz 200 before the fault');
    // What was acknowledged has reached the disk (SQLite's WAL is synced at checkpoints; the kernel
    // writes back within seconds): the fault below must not be what loses it.
    sh('sync', ['-f', dataDir]);

    const dev = path.basename(sh('findmnt', ['-n', '-o', 'SOURCE', mnt]));
    const began = Date.now();
    writeFileSync(`/sys/fs/ext4/${dev}/trigger_fs_error`, 'rigd test: failing disk\n');
    // No traffic: /healthz finds it by itself (its probe writes and syncs in data_dir).
    const unhealthy = await waitFor(async () => {
      const res = await http(`${srv.url}/healthz`);
      return res.status === 503 ? res : null;
    }, 60_000, '/healthz to turn 503', 100);
    t.comment(`/healthz answered 503 ${Date.now() - began} ms after the file system error, with no other traffic`);
    const first = (unhealthy.json() as { failing: string[] }).failing;
    t.ok(first.includes('disk_write') || first.includes('database_write'), `it names the failing write (the probe's, or the node heartbeat's): ${JSON.stringify(first)}`);
    // The probe's own result (it reuses a result for a second): the file system, named.
    const probed = await waitFor(async () => {
      const res = await http(`${srv.url}/healthz`);
      const b = res.json() as { failing: string[]; checks: Record<string, string> };
      return res.status === 503 && b.failing.includes('disk_write') ? b : null;
    }, 60_000, '/healthz to name disk_write', 100);
    const body = probed;
    t.match(body.checks.disk_write ?? '', /read-only \(EROFS\)/, `saying the file system is read-only: ${body.checks.disk_write}`);

    if (!onPostgres) {
      const r = await report(99);
      t.equal(r.status, 503, `a rig report: 503 (not 500) ${r.body}`);
      t.match(r.headers['content-type'] ?? '', /^text\/plain/, 'text/plain on the rig route');
      t.match(r.body, /^[^\n]*read-only[^\n]*\n$/, `one line saying the file system went read-only: ${JSON.stringify(r.body)}`);
      const l = await login();
      t.equal(l.status, 503, 'a login: 503');
      t.equal(l.json().error?.code, 'database_read_only', `code database_read_only: ${l.text.slice(0, 200)}`);
      const rv = await reserve('ro-rig0/after.sqlite');
      t.equal(rv.status, 503, 'a reservation: 503');
      t.equal(JSON.parse(rv.body).error?.code, 'database_read_only', `code database_read_only: ${rv.body.slice(0, 200)}`);
      const health = await http(`${srv.url}/healthz`);
      t.equal(health.status, 503, `/healthz still 503 after the refused writes: ${JSON.stringify(health.json().failing)}`);
    } else {
      t.equal((await report(99)).status, 200, 'PostgreSQL: the database is elsewhere, reports are still stored');
      acked++;
    }
    t.doesNotMatch(srv.output(), /"level":"error"[^\n]*request failed|\n\s+at /, 'no 500 and no stack trace in the log');

    const doctor = await rigd(['doctor', '--json'], { env });
    const checks = (JSON.parse(doctor.stdout) as { checks: { check: string; status: string; message: string }[] }).checks;
    const dd = checks.find((c) => c.check === 'data_dir');
    t.equal(dd?.status, 'fail', `doctor: data_dir fails: ${dd?.message}`);
    t.match(dd?.message ?? '', /read-only file system/, 'naming the read-only file system');
    const nodes = checks.find((c) => c.check === 'nodes');
    t.doesNotMatch(nodes?.message ?? '', /no live node/, `doctor does not say "no live node" while rigd serve runs: ${nodes?.message}`);

    await server.stop('SIGKILL');
    server = undefined;
  } finally {
    if (server) await server.stop('SIGKILL');
    await hosts?.destroy();
    if (mounted) {
      sh('umount', [mnt]);
      mounted = false;
    }
  }

  // The disk checked and mounted again: every acknowledged write is there, once.
  // e2fsck: 0 clean, 1 errors corrected (the error the test raised), 2 corrected, reboot advised.
  const fsck = spawnSync('e2fsck', ['-fy', image], { encoding: 'utf8' });
  t.ok(fsck.status !== null && fsck.status <= 2, `e2fsck repaired the file system (exit ${fsck.status})`);
  sh('mount', ['-o', 'loop', image, mnt]);
  try {
    let total = 0;
    for (const id of ['ro-rig0', 'ro-rig1', 'ro-rig2']) {
      const history = await rigd(['rigs', 'history', id, '--since', '1d', '--json'], { env });
      total += (JSON.parse(history.stdout) as unknown[]).length;
    }
    t.equal(total, onPostgres ? 31 : 30, 'every acknowledged report is a row, once');
    const uploads = JSON.parse((await rigd(['uploads', '--json'], { env })).stdout) as { key: string }[];
    t.deepEqual(uploads.map((u) => u.key), ['ro-rig0/before.sqlite'], 'the acknowledged reservation, once (the refused one is not there)');
    const users = JSON.parse((await rigd(['user', 'list', '--json'], { env })).stdout) as { name?: string; login?: string }[];
    t.equal(users.length, 1, 'the user is there');
  } finally {
    sh('umount', [mnt]);
  }
});
