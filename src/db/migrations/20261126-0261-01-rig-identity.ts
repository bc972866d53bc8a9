import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * A rig is its VPN address, and a key belongs to its rig:
 * - rigs.bound_address: the VPN address the rig id is bound to (rigs.address_binding); null after
 *   `rigd rigs forget` (the next report binds it again). Existing rigs are bound to their last address.
 * - rigs.registered_from: the address that registered the id (new ids per address per hour).
 * - object_owners: the rig (or, for an address without a rig, "@<address>") that owns each key.
 *   Keys already uploaded belong to the rig of their first completed upload.
 * - uploads (rig_id, created_at) and (peer_address, created_at): the per-rig reservation bounds.
 */
export const rigIdentity: Migration = {
  name: '20261126-0261-01-rig-identity',
  async up({ context: qi }) {
    await qi.addColumn('rigs', 'bound_address', { type: DataTypes.STRING(45), allowNull: true });
    await qi.addColumn('rigs', 'registered_from', { type: DataTypes.STRING(45), allowNull: true });
    await qi.sequelize.query('UPDATE rigs SET bound_address = vpn_address, registered_from = vpn_address');
    await qi.addIndex('rigs', ['bound_address'], { name: 'rigs_bound_address' });
    await qi.addIndex('rigs', ['registered_from', 'created_at'], { name: 'rigs_registered_from_created_at' });
    await qi.createTable('object_owners', {
      key: { type: DataTypes.STRING(1024), primaryKey: true, allowNull: false },
      owner: { type: DataTypes.STRING(64), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    // The first completed upload of each key (by id) names its owner.
    await qi.sequelize.query(
      `INSERT INTO object_owners (key, owner, created_at)
       SELECT u.key, COALESCE(u.rig_id, '@' || u.peer_address), u.created_at
         FROM uploads u
        WHERE u.state = 'uploaded' AND u.id = (SELECT MIN(f.id) FROM uploads f WHERE f.key = u.key AND f.state = 'uploaded')`,
    );
    await qi.addIndex('uploads', ['rig_id', 'created_at'], { name: 'uploads_rig_id_created_at' });
    await qi.addIndex('uploads', ['peer_address', 'created_at'], { name: 'uploads_peer_address_created_at' });
  },
  async down({ context: qi }) {
    await qi.removeIndex('uploads', 'uploads_peer_address_created_at');
    await qi.removeIndex('uploads', 'uploads_rig_id_created_at');
    await qi.dropTable('object_owners');
    await qi.removeIndex('rigs', 'rigs_registered_from_created_at');
    await qi.removeIndex('rigs', 'rigs_bound_address');
    await qi.removeColumn('rigs', 'registered_from');
    await qi.removeColumn('rigs', 'bound_address');
  },
};
