import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { MIGRATION_NAMES } from '../../src/db/migrations/names.ts';
import { openLiteReader } from '../../src/db/reader.ts';
import { listRigs } from '../../src/services/rigs/queries.ts';
import { listUsers } from '../../src/services/auth/user-queries.ts';
import { testConfig } from '../helpers/server.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('the light migration list names every migration, in order', (t) => {
  t.deepEqual([...MIGRATION_NAMES], migrations.map((m) => m.name));
  t.end();
});

test('the lite reader: null for a missing or unmigrated database; the same rows as through Sequelize', async (t) => {
  const dir = tmpDir();
  if (onPostgres) {
    t.equal(await openLiteReader(dir, databaseUrlFor(dir)), null, 'an empty database (never migrated): null (the caller migrates it)');
  } else {
    t.equal(await openLiteReader(dir), null, 'no database file: null (the caller creates it)');
    writeFileSync(path.join(dir, 'rigd.sqlite'), '');
    t.equal(await openLiteReader(dir), null, 'an empty file (never migrated): null');
  }

  const config = testConfig();
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  try {
    await db.writes.run(async (tx) => {
      await db.models.User.create({ username: 'Zed', username_key: 'zed', email: 'z@x.org', email_key: 'z@x.org', password_hash: 'h', is_admin: true, rig_ui_settings: '{"a":1}' }, { transaction: tx });
      await db.models.User.create({ username: 'amy', username_key: 'amy', email: 'a@x.org', email_key: 'a@x.org', password_hash: 'h' }, { transaction: tx });
      const seen = new Date(Date.now() - 400_000);
      for (const id of ['rig10', 'rig2']) {
        await db.models.Rig.create({ id, serial: 'S', lan_ip: null, vpn_address: '10.144.0.2', version: '1', branch: 'main', latitude: null, longitude: 1.5, last_seen_at: seen }, { transaction: tx });
      }
    });
    const lite = await openLiteReader(config.data_dir, config.database.url);
    t.ok(lite, 'a current database opens without Sequelize');
    const now = new Date();
    const viaLite = { users: await listUsers(lite!), rigs: await listRigs(lite!, config, now) };
    const viaSequelize = { users: await listUsers(db.reader), rigs: await listRigs(db.reader, config, now) };
    await lite!.close();
    t.deepEqual(viaLite, viaSequelize, 'identical results through both readers');
    t.deepEqual(viaLite.users.map((u) => [u.username, u.admin, u.rig_ui_settings]), [['amy', false, null], ['Zed', true, { a: 1 }]], 'users by name, types restored');
    t.ok(viaLite.users[0].created_at instanceof Date && !Number.isNaN(viaLite.users[0].created_at.getTime()), 'dates parsed');
    t.deepEqual(viaLite.rigs.map((r) => [r.id, r.status]), [['rig2', 'stale'], ['rig10', 'stale']], 'natural order, status computed');
  } finally {
    await db.close();
  }
});
