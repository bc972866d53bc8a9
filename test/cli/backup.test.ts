// rigd backup while rigd serve takes 100 rig reports a second; rigd restore of that backup into a
// fresh data_dir gives a database that opens and passes integrity_check. restore refuses while a
// server runs on its data_dir, and keeps the old file aside.
import test from 'tape';
import { existsSync, readdirSync, statSync, watch } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { sqliteOnly, testDb } from '../helpers/dialect.ts';

function query<T>(file: string, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.all(sql, (e, rows) => db.close(() => (e ? reject(e) : resolve(rows as T[]))));
    });
  });
}

test('backup under 100 reports/s restores to a sound database', async (t) => {
  if (sqliteOnly(t, 'the SQLite online backup and restore by file; pg_dump/pg_restore: test/cli/backup-postgres.test.ts')) return;
  const dataDir = tmpDir();
  // Loopback is the VPN for this server: rigs report from 127.0.0.1 with Host 127.0.0.1.
  const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8' };
  const srv = await serveProcess(env);
  let sent = 0;
  let okCount = 0;
  let running = true;
  const load = (async () => {
    const started = Date.now();
    while (running) {
      // 10 reports every 100 ms = 100 reports/s from 20 rigs.
      const batch = Array.from({ length: 10 }, (_, i) => {
        const id = `rig${(sent + i) % 20}`;
        return fetch(`${srv.url}/api/v1/rigs/${id}`, {
          method: 'PUT',
          headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
          body: `rig_serial=S-${id}&software_version=2.0&git_branch=main&gpsd_latitude=52.5&gpsd_longitude=13.4`,
        }).then((r) => r.status === 200 && okCount++);
      });
      sent += 10;
      await Promise.all(batch);
      const next = started + (sent / 100) * 1000;
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
    }
  })();
  await new Promise((r) => setTimeout(r, 1500));
  const backupFile = path.join(tmpDir(), 'rigd-backup.sqlite');
  const before = okCount;
  const res = await rigd(['backup', backupFile], { env });
  const during = okCount - before;
  await new Promise((r) => setTimeout(r, 500));
  running = false;
  await load;
  t.equal(res.code, 0, `backup exits 0 ${res.stderr}`);
  t.match(res.stdout, /^backed up the database to .*rigd-backup\.sqlite \(.* KiB, integrity_check ok\)\n$/, 'one line');
  t.ok(during > 0, `reports kept committing during the backup (${during})`);
  t.equal(okCount, sent, `every report answered 200 (${okCount}/${sent})`);

  const refused = await rigd(['restore', backupFile], { env });
  t.equal(refused.code, 1, 'restore while rigd serve runs on the data_dir: exit 1');
  t.match(refused.stderr, /^rigd: rigd serve is running on .* \(pid \d+\): stop it first \(systemctl stop rigd\), then restore\n$/, 'says why and what to do');
  t.equal(await srv.stop(), 0, 'serve stops cleanly');

  const again = await rigd(['backup', backupFile], { env });
  t.equal(again.code, 1, 'backup never overwrites a file');

  const target = tmpDir();
  const restoreEnv = { RIGD_DATA_DIR: target };
  const first = await rigd(['migrate'], { env: restoreEnv });
  t.equal(first.code, 0, 'a fresh data_dir with its own (empty) database');
  const restored = await rigd(['restore', backupFile, '--json'], { env: restoreEnv });
  t.equal(restored.code, 0, `restore exits 0 ${restored.stderr}`);
  const result = JSON.parse(restored.stdout);
  t.ok(result.previous && existsSync(result.previous), 'the previous database is kept aside');
  const live = path.join(target, 'rigd.sqlite');
  const [check] = await query<{ integrity_check: string }>(live, 'PRAGMA integrity_check');
  t.equal(check.integrity_check, 'ok', 'restored database passes integrity_check');
  const [{ n }] = await query<{ n: number }>(live, 'SELECT count(*) AS n FROM rig_reports');
  t.ok(n > 0 && n <= okCount, `restored history holds the reports committed before the backup (${n} of ${okCount})`);
  const rigs = await rigd(['rigs', '--json'], { env: restoreEnv });
  t.equal(JSON.parse(rigs.stdout).length, 20, 'the restored database opens through rigd: 20 rigs');
  t.deepEqual(readdirSync(target).filter((f) => f.endsWith('.tmp')), [], 'no temp files left');

  const junk = path.join(tmpDir(), 'junk.sqlite');
  (await import('node:fs')).writeFileSync(junk, 'not a database at all, just text'.repeat(200));
  const bad = await rigd(['restore', junk], { env: restoreEnv });
  t.equal(bad.code, 1, 'a file that is not a database is refused');
  t.match(bad.stderr, /^rigd: restore refused: .*(not an SQLite database|integrity_check|file is not a database)/, `says why: ${bad.stderr.trim()}`);
});

test('backup files and their temp files are 0600 (they hold password hashes and session tokens)', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  t.equal((await rigd(['migrate'], { env })).code, 0, 'migrate');
  const file = path.join(tmpDir(), 'b.sqlite');
  const res = await rigd(['backup', file], { env });
  t.equal(res.code, 0, `rigd backup: exit 0 ${res.stderr}`);
  t.equal(statSync(file).mode & 0o777, 0o600, 'the backup file is 0600');
  if (sqliteOnly(t, 'the temp file VACUUM INTO writes (pg_dump writes the file itself, created 0600 first)')) return;

  // The temp file, caught while VACUUM INTO writes it (a database big enough to take a while).
  const { backupDatabase } = await import('../../src/db/backup.ts');
  const { openDatabase } = await import('../../src/db/index.ts');
  const db = await openDatabase(dataDir, testDb(dataDir));
  await db.sequelize.query('CREATE TABLE filler (b BLOB)');
  await db.writes.run(async (tx) => {
    for (let i = 0; i < 200; i++) await db.sequelize.query('INSERT INTO filler VALUES (randomblob(65536))', { transaction: tx });
  });
  await db.close();
  const dir = tmpDir();
  const seen: number[] = [];
  const watcher = watch(dir, (_event, name) => {
    if (!name?.endsWith('.tmp')) return;
    try {
      seen.push(statSync(path.join(dir, name)).mode & 0o777);
    } catch {
      // renamed already
    }
  });
  try {
    await backupDatabase(dataDir, path.join(dir, 'c.sqlite'));
  } finally {
    watcher.close();
  }
  t.ok(seen.length > 0, `the temp file was seen while it was written (${seen.length} times)`);
  t.deepEqual([...new Set(seen)].map((m) => m.toString(8)), ['600'], 'the temp file is 0600 from the start');
  t.equal(statSync(path.join(dir, 'c.sqlite')).mode & 0o777, 0o600, 'and the finished backup too');
});

test('backup --capture-store also copies the capture store (0600, every committed row); without a store it says why', async (t) => {
  if (sqliteOnly(t, 'rigd backup --capture-store is refused on PostgreSQL for now (backup-postgres.test.ts)')) return;
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  t.equal((await rigd(['migrate'], { env })).code, 0, 'migrate');
  const out = tmpDir();
  const none = await rigd(['backup', path.join(out, 'a.sqlite'), '--capture-store', path.join(out, 'a-store.sqlite')], { env });
  t.notEqual(none.code, 0, 'fails without a store');
  t.match(none.stderr, /capture store backup failed: .*does not exist: no capture has been imported yet/, `says why: ${none.stderr.trim()}`);

  const { openCaptureStore } = await import('../../src/db/capture-store/index.ts');
  const store = await openCaptureStore(dataDir);
  await store.replace(7, [{ name: 'readings', columns: [{ name: 'v', type: 'INTEGER' }] }], (async function* () {
    yield { table: 'readings', rows: Array.from({ length: 250 }, (_, i) => [i]), bytes: 2000 };
  })());
  await store.close();
  const target = path.join(out, 'b-store.sqlite');
  const res = await rigd(['backup', path.join(out, 'b.sqlite'), '--capture-store', target, '--json'], { env });
  t.equal(res.code, 0, `exit 0 ${res.stderr}`);
  const json = JSON.parse(res.stdout) as { file: string; capture_store: { file: string; bytes: number } };
  t.equal(json.capture_store.file, target, 'the JSON names the store copy');
  t.equal(statSync(target).mode & 0o777, 0o600, 'the store copy is 0600');
  const [row] = await query<{ n: number }>(target, 'SELECT count(*) AS n FROM readings WHERE capture_id = 7');
  t.equal(row!.n, 250, 'every row');
});
