// Upgrading a database built before rig identity: every rig is bound to (and registered from) its last
// VPN address, and each uploaded key belongs to the rig of its first completed upload; nothing stored
// is lost.
import { QueryTypes, type Sequelize } from 'sequelize';
import test from 'tape';
import { SequelizeStorage, Umzug } from 'umzug';
import { openDatabase } from '../../../src/db/index.ts';
import { MIGRATIONS_TABLE } from '../../../src/db/migrate.ts';
import { migrations } from '../../../src/db/migrations/index.ts';
import { loadDialect } from '../../../src/db/dialect/index.ts';
import { testDb } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const T0 = '2026-11-20 10:00:00.000 +00:00';

async function migrateUpTo(sequelize: Sequelize, last: string): Promise<void> {
  const upTo = migrations.slice(0, migrations.findIndex((m) => m.name === last) + 1);
  const umzug = new Umzug({ migrations: upTo, context: sequelize.getQueryInterface(), storage: new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE }), logger: undefined });
  await umzug.up();
}

async function insert(sequelize: Sequelize, table: string, values: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(values);
  await sequelize.query(`INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, { replacements: cols.map((c) => values[c]), type: QueryTypes.INSERT });
}

test('rigs bound to their last address; each uploaded key owned by its first uploader; nothing lost', async (t) => {
  const dir = tmpDir();
  const dialect = await loadDialect();
  const old = dialect.connect(dir, testDb(dir));
  await migrateUpTo(old, '20261124-0103-nodes');
  for (const [id, address] of [['rig1', '10.144.25.2'], ['rig2', '10.144.25.3']]) {
    await insert(old, 'rigs', { id, serial: `S-${id}`, vpn_address: address, version: '1', branch: 'main', last_seen_at: T0, created_at: T0, updated_at: T0 });
  }
  const upload = (rig: string | null, peer: string, key: string, state: string) =>
    insert(old, 'uploads', { rig_id: rig, peer_address: peer, key, expected_size: 10, state, url_expires_at: T0, created_at: T0, updated_at: T0 });
  await upload('rig1', '10.144.25.2', 'a.sqlite', 'expired'); // never uploaded: no claim
  await upload('rig2', '10.144.25.3', 'a.sqlite', 'uploaded'); // the first completed upload owns it
  await upload('rig1', '10.144.25.2', 'a.sqlite', 'uploaded');
  await upload(null, '10.144.25.9', 'b.sqlite', 'uploaded'); // an address without a rig
  await upload('rig1', '10.144.25.2', 'c.sqlite', 'reserved'); // not uploaded: no claim
  await dialect.close(old);

  const db = await openDatabase(dir, testDb(dir)); // the rest of the migrations
  try {
    const rigs = await db.reader.all<{ id: string; bound_address: string; registered_from: string }>('SELECT id, bound_address, registered_from FROM rigs ORDER BY id');
    t.deepEqual(rigs.map((r) => [r.id, r.bound_address, r.registered_from]), [['rig1', '10.144.25.2', '10.144.25.2'], ['rig2', '10.144.25.3', '10.144.25.3']], 'each rig bound to its last address');
    const owners = await db.reader.all<{ key: string; owner: string }>('SELECT "key", owner FROM object_owners ORDER BY "key"');
    t.deepEqual(owners.map((o) => [o.key, o.owner]), [['a.sqlite', 'rig2'], ['b.sqlite', '@10.144.25.9']], 'uploaded keys owned by their first completed upload');
    t.equal((await db.reader.all('SELECT id FROM uploads')).length, 5, 'every upload row kept');
  } finally {
    await db.close();
  }
});
