// test: alone (a tmpfs filled)
// A full disk under data_dir: rigd serve runs on a small tmpfs this test mounts, rigs report over real
// HTTP, then a filler file takes every free block. Writes answer 503 (rig route: text/plain, one line;
// JSON routes: disk_full), /healthz answers 503 naming disk_space, and every report acknowledged before
// is still in the database. Once the filler is gone, writes succeed again in the same process (no
// restart) and /healthz is 200.
import test from 'tape';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src/db/index.ts';
import { http } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { sqliteOnly, testDb } from '../helpers/dialect.ts';

const mounted: string[] = [];
process.on('exit', () => {
  for (const dir of mounted) {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      // already gone
    }
  }
});

function mountTmpfs(sizeMb: number): string {
  const dir = tmpDir('rigd-full-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', dir]);
  mounted.push(dir);
  return dir;
}

function freeBytes(dir: string): number {
  const st = statfsSync(dir);
  return Number(st.bavail) * Number(st.bsize);
}

/** Takes every free block of dir's file system: fallocate, then plain writes until ENOSPC. */
function fill(file: string): void {
  try {
    execFileSync('fallocate', ['-l', String(Math.max(4096, freeBytes(path.dirname(file)) - 4096)), file]);
  } catch {
    // fallocate may refuse a size it cannot hold; the writes below take the rest.
  }
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

let serial = 0;
/** One rig report with a serial never used before; resolves with it and the response. */
async function report(s: TestServer, rig: string) {
  const sn = `SN-${++serial}`;
  const res = await http(`${s.url}/api/v1/rigs/${rig}`, {
    method: 'PUT',
    headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
    body: `rig_serial=${sn}&software_version=2.0&git_branch=main&gpsd_latitude=52.5&gpsd_longitude=13.4`,
  });
  return { sn, res };
}

async function health(s: TestServer) {
  const res = await http(`${s.url}/healthz`);
  return { status: res.status, body: res.json() };
}

test('disk full: 503 disk_full, healthz names it, nothing acknowledged is lost, recovery without restart', async (t) => {
  if (sqliteOnly(t, 'fills the file system holding data_dir, where only SQLite keeps the database (PostgreSQL: test/db/postgres-faults.test.ts)')) return;
  const dataDir = mountTmpfs(24);
  let s: TestServer | undefined;
  try {
    s = await startServer({ data_dir: dataDir, vpn: { cidr: '127.0.0.0/8' }, server: { min_free_mb: 4 } });
    await s.app.storage.ensureBucket();
    await s.app.users.create({ username: 'ann', email: 'ann@example.com', password: 'ann-password-1' });
    const login = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ann', password: 'ann-password-1' } });
    t.equal(login.status, 200, 'login before the fill');
    const token = login.json().token as string;
    const userId = String(login.json().data.user.id);
    const before = await health(s);
    t.equal(before.status, 200, `healthz 200 before the fill ${JSON.stringify(before.body)}`);

    const acknowledged: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { sn, res } = await report(s, `rig${i % 10}`);
      if (res.status === 200) acknowledged.push(sn);
    }
    t.equal(acknowledged.length, 40, 'all 40 reports before the fill: 200');

    const filler = path.join(dataDir, 'filler');
    fill(filler);
    t.ok(freeBytes(dataDir) < 64 * 1024, `data_dir's file system is full (${freeBytes(dataDir)} bytes free)`);

    // SQLite may still place some commits in WAL space it already holds: report until one fails.
    let refused: Awaited<ReturnType<typeof report>>['res'] | undefined;
    for (let i = 0; i < 3000 && !refused; i++) {
      const { sn, res } = await report(s, `rig${i % 10}`);
      if (res.status === 200) acknowledged.push(sn);
      else refused = res;
    }
    t.ok(refused, `a report failed once the disk was full (${acknowledged.length - 40} more were acknowledged first)`);
    t.equal(refused?.status, 503, 'the rig report: 503');
    t.match(String(refused?.headers['content-type']), /^text\/plain/, 'text/plain');
    t.match(refused?.text ?? '', /^[^\n]*disk[^\n]*full[^\n]*\n$/, `one line: ${JSON.stringify(refused?.text)}`);

    // Reports arriving together share one transaction: all of them fail alike, none with a 500.
    const together = await Promise.all(Array.from({ length: 20 }, (_, i) => report(s!, `rig${i}`)));
    for (const { sn, res } of together) if (res.status === 200) acknowledged.push(sn);
    t.deepEqual([...new Set(together.map((r) => r.res.status))].filter((st) => st !== 200 && st !== 503), [], `20 concurrent reports: 503 each (${together.filter((r) => r.res.status === 503).length} of 20)`);

    // A JSON write: its own loop, for the same reason.
    let settings: Awaited<ReturnType<typeof http>> | undefined;
    for (let i = 0; i < 500; i++) {
      settings = await http(`${s.url}/api/v1/users/${userId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}` },
        json: { user: { rig_ui_settings: { columns: ['id', 'status'], n: i } } },
      });
      if (settings.status !== 200) break;
    }
    t.equal(settings?.status, 503, 'PUT /api/v1/users/:id settings: 503');
    t.equal(settings?.json().error?.code, 'disk_full', `JSON error code disk_full: ${settings?.text}`);

    // Free space is read at most once a second: poll (60 s at most: a busy machine may be slow).
    let full = await health(s);
    for (const until = Date.now() + 60_000; Date.now() < until && !full.body.failing?.includes('disk_space'); ) {
      await new Promise((r) => setTimeout(r, 200));
      full = await health(s);
    }
    t.equal(full.status, 503, '/healthz: 503 while the disk is full');
    t.ok(full.body.failing?.includes('disk_space'), `names the failing check: ${JSON.stringify(full.body.failing)}`);
    t.match(String(full.body.checks.disk_space), /MiB free/, `disk_space says how much is free: ${full.body.checks.disk_space}`);

    rmSync(filler);
    let after = await health(s);
    for (const until = Date.now() + 60_000; Date.now() < until && after.status !== 200; ) {
      await new Promise((r) => setTimeout(r, 200));
      after = await health(s);
    }
    t.equal(after.status, 200, `/healthz 200 again once space is back ${JSON.stringify(after.body)}`);

    let okAfter = 0;
    for (let i = 0; i < 10; i++) {
      const { sn, res } = await report(s, `rig${i}`);
      if (res.status === 200) {
        acknowledged.push(sn);
        okAfter++;
      }
    }
    t.equal(okAfter, 10, 'reports succeed again without a restart');
    const relogin = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ann', password: 'ann-password-1' } });
    t.equal(relogin.status, 200, 'a login (a session write) succeeds again');
    await s.close();
    s = undefined;

    // Reopened from the file: every acknowledged report is there.
    const db = await openDatabase(dataDir, testDb(dataDir));
    try {
      const rows = await db.reader.all<{ serial: string }>('SELECT serial FROM rig_reports');
      const stored = new Set(rows.map((r) => r.serial));
      const lost = acknowledged.filter((sn) => !stored.has(sn));
      t.deepEqual(lost, [], `all ${acknowledged.length} acknowledged reports are in the database`);
    } finally {
      await db.close();
    }
  } finally {
    await s?.close();
    execFileSync('umount', [dataDir]);
    mounted.splice(mounted.indexOf(dataDir), 1);
  }
});
