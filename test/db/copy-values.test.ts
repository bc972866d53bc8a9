// copyToPostgres: times, booleans, big integers, doubles and NULLs arrive exactly; ids are kept and the
// sequences continue after them; the counts are table by table.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import test from 'tape';
import { copyToPostgres } from '../../src/db/copy/copy.ts';
import { openDatabase } from '../../src/db/index.ts';
import { databaseUrlFor, postgresOnly } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const T = '2026-11-23 10:00:00.123 +00:00';

function psql(url: string, sql: string): string {
  return execFileSync('psql', ['-qAtX', url, '-c', sql], { encoding: 'utf8' }).trim();
}

test('values survive exactly; ids kept; sequences set past them', async (t) => {
  if (postgresOnly(t, 'copies into PostgreSQL')) return;
  const dataDir = tmpDir();
  await (await openDatabase(dataDir, { url: '' })).close();
  execFileSync('sqlite3', [path.join(dataDir, 'rigd.sqlite'), `
    INSERT INTO users (id, username, username_key, email, email_key, password_hash, is_admin, rig_ui_settings, created_at, updated_at)
      VALUES (5, 'Ana', 'ana', 'a@x.org', 'a@x.org', 'h', 1, NULL, '${T}', '${T}'), (9, 'Bo', 'bo', 'b@x.org', 'b@x.org', 'h', 0, '{"z":1}', '${T}', '${T}');
    INSERT INTO uploads (id, rig_id, peer_address, key, expected_size, state, bytes_seen, url_expires_at, checks, created_at, updated_at)
      VALUES (41, NULL, '10.144.162.2', 'k', 9007199254740993, 'reserved', 0, '${T}', 0, '${T}', '${T}');
    INSERT INTO rigs (id, serial, lan_ip, vpn_address, version, branch, latitude, longitude, last_seen_at, created_at, updated_at)
      VALUES ('r', 'S', NULL, '10.144.162.2', '', '', 47.123456789012345, -0.1, '${T}', '${T}', '${T}');
  `]);
  const url = databaseUrlFor(tmpDir());
  const target = await openDatabase(dataDir, { url, migrate: false });
  try {
    const result = await copyToPostgres({ dataDir, target: target.sequelize, openCaptureStore: () => Promise.reject(new Error('the store is empty: not opened')) });
    t.ok(result.ok, 'counts agree');
    t.deepEqual(result.tables.filter((r) => ['users', 'uploads', 'rigs', 'sessions'].includes(r.table)).map((r) => [r.table, r.source, r.target]).sort(), [['rigs', 1, 1], ['sessions', 0, 0], ['uploads', 1, 1], ['users', 2, 2]]);
    t.ok(result.migrations.length > 0, 'the target was migrated by rigd');
  } finally {
    await target.close();
  }
  t.equal(psql(url, 'SELECT id, is_admin, rig_ui_settings IS NULL FROM users ORDER BY id'), '5|t|t\n9|f|f', 'ids, booleans, NULLs');
  t.equal(psql(url, "SELECT created_at = TIMESTAMPTZ '2026-11-23 10:00:00.123+00' FROM users WHERE id = 5"), 't', 'times to the millisecond');
  t.equal(psql(url, 'SELECT expected_size::text, rig_id IS NULL FROM uploads'), '9007199254740993|t', 'a big integer exactly');
  t.equal(psql(url, 'SELECT latitude = 47.123456789012345::float8, longitude = -0.1::float8, lan_ip IS NULL FROM rigs'), 't|t|t', 'doubles exactly');
  t.equal(
    psql(url, "INSERT INTO users (username, username_key, email, email_key, password_hash, is_admin, created_at, updated_at) VALUES ('c', 'c', 'c', 'c', 'h', false, now(), now()) RETURNING id"),
    '10',
    'a new user takes the id after the copied ones',
  );
  t.equal(psql(url, "INSERT INTO sessions (token_hash, user_id, expires_at, last_used_at, created_at) VALUES ('t', 5, now(), now(), now()) RETURNING id"), '1', 'an empty table starts at 1');
});
