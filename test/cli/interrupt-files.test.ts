// Ctrl-C (SIGINT) mid-way through rigd backup and rigd restore: the command ends by the signal and
// leaves nothing half-written behind (no hidden temp copy of the database beside FILE), and restore
// leaves the database it was replacing in place. The database is large enough that the copy is
// still being written when the temp file appears; the signal is sent the moment it appears.
import test from 'tape';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, watch } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { rigCommand, rigd, rigdEnv } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { sqliteOnly } from '../helpers/dialect.ts';

function exec(file: string, sql: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => {
      if (err) return reject(err);
      db.exec(sql, (e) => db.close(() => (e ? reject(e) : resolve())));
    });
  });
}

/**
 * Runs `rigd ARGS` and sends SIGINT as soon as a file whose name matches `appears` shows up in `dir`.
 * Resolves with how the process ended and whether the signal was sent.
 */
function interruptWhen(args: string[], env: Record<string, string>, dir: string, appears: RegExp): Promise<{ code: number | null; signal: NodeJS.Signals | null; sent: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    let sent = false;
    const [file, argv] = rigCommand(args);
    const child = spawn(file, argv, { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();
    const watcher = watch(dir, (_event, name) => {
      if (sent || !name || !appears.test(String(name))) return;
      sent = child.kill('SIGINT');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      watcher.close();
      resolve({ code, signal, sent, stderr });
    });
  });
}

async function userNames(env: Record<string, string>): Promise<string[]> {
  const list = await rigd(['user', 'list', '--json'], { env });
  return (JSON.parse(list.stdout) as { username: string }[]).map((u) => u.username);
}

test('Ctrl-C during rigd backup and rigd restore: nothing half-written is left, the database stays', async (t) => {
  if (sqliteOnly(t, 'the SQLite file backup and restore; PostgreSQL uses pg_dump/pg_restore')) return;
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `a user to keep ${add.stderr}`);
  // About 200 MB of pages for VACUUM INTO, integrity_check and the copy to work through.
  await exec(path.join(dataDir, 'rigd.sqlite'), 'CREATE TABLE bulk (b BLOB); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) INSERT INTO bulk SELECT randomblob(1000000) FROM c;');

  const out = tmpDir();
  const backup = await interruptWhen(['backup', path.join(out, 'full.sqlite')], env, out, /\.tmp$/);
  t.ok(backup.sent, 'SIGINT sent while the temp copy was being written');
  t.equal(backup.signal, 'SIGINT', `backup ended by SIGINT (code ${backup.code}, ${backup.stderr.trim()})`);
  t.deepEqual(readdirSync(out), [], 'nothing left where the backup was going: no temp copy, no FILE');
  t.deepEqual(await userNames(env), ['ana'], 'the database still holds ana');
  // Later, while VACUUM INTO writes: its rollback journal goes too.
  const writing = await interruptWhen(['backup', path.join(out, 'full.sqlite')], env, out, /\.tmp-journal$/);
  t.ok(writing.sent, 'SIGINT sent while VACUUM INTO was writing (its journal there)');
  t.equal(writing.signal, 'SIGINT', `backup ended by SIGINT (code ${writing.code}, ${writing.stderr.trim()})`);
  t.deepEqual(readdirSync(out), [], 'nothing left: no temp copy, no journal, no FILE');

  // A whole backup to restore from, then a restore interrupted while it copies it in.
  const whole = await rigd(['backup', path.join(out, 'whole.sqlite')], { env });
  t.equal(whole.code, 0, `an uninterrupted backup works ${whole.stderr}`);
  const other = tmpDir();
  const otherEnv = { RIGD_DATA_DIR: other };
  const bob = await rigd(['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'], { env: otherEnv, input: 'bob-password\n' });
  t.equal(bob.code, 0, `the database to be replaced holds bob ${bob.stderr}`);
  const before = readdirSync(other).sort();
  const restore = await interruptWhen(['restore', path.join(out, 'whole.sqlite')], otherEnv, other, /\.restore-.*\.tmp$/);
  t.ok(restore.sent, 'SIGINT sent while the backup was being copied in');
  t.equal(restore.signal, 'SIGINT', `restore ended by SIGINT (code ${restore.code}, ${restore.stderr.trim()})`);
  t.ok(existsSync(path.join(other, 'rigd.sqlite')), 'rigd.sqlite is still there');
  t.deepEqual(readdirSync(other).sort(), before, 'data_dir as before: no temp copy left, nothing renamed aside');
  t.deepEqual(await userNames(otherEnv), ['bob'], 'the database still holds bob');
  const again = await rigd(['restore', path.join(out, 'whole.sqlite')], { env: otherEnv });
  t.equal(again.code, 0, `the restore run again to its end works ${again.stderr}`);
  t.deepEqual(await userNames(otherEnv), ['ana'], 'and then the database is the backup');
});
