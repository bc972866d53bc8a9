import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/** Rigs (one row each, updated by every report) and their report history (the device location records). */
export const rigs: Migration = {
  name: '20261122-0002-rigs',
  async up({ context: qi }) {
    await qi.createTable('rigs', {
      // The :id of PUT /api/v1/rigs/:id, a DNS label, lower-cased.
      id: { type: DataTypes.STRING(63), primaryKey: true, allowNull: false },
      serial: { type: DataTypes.STRING(128), allowNull: false },
      lan_ip: { type: DataTypes.STRING(45), allowNull: true },
      // The VPN peer address the last report came from (identifies the rig for uploads).
      vpn_address: { type: DataTypes.STRING(45), allowNull: false },
      version: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
      branch: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
      latitude: { type: DataTypes.DOUBLE, allowNull: true },
      longitude: { type: DataTypes.DOUBLE, allowNull: true },
      last_seen_at: { type: DataTypes.DATE, allowNull: false },
      // Set by upload requests (GET /api/v1/rigs/upload?project=...), inherited by later captures.
      current_project: { type: DataTypes.STRING(64), allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.addIndex('rigs', ['vpn_address'], { name: 'rigs_vpn_address' });
    await qi.createTable('rig_reports', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      rig_id: {
        type: DataTypes.STRING(63),
        allowNull: false,
        references: { model: 'rigs', key: 'id' },
        onDelete: 'CASCADE',
      },
      received_at: { type: DataTypes.DATE, allowNull: false },
      serial: { type: DataTypes.STRING(128), allowNull: false },
      lan_ip: { type: DataTypes.STRING(45), allowNull: true },
      peer_address: { type: DataTypes.STRING(45), allowNull: false },
      version: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
      branch: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
      latitude: { type: DataTypes.DOUBLE, allowNull: true },
      longitude: { type: DataTypes.DOUBLE, allowNull: true },
    });
    // One rig's history, newest first (and its since/until windows).
    await qi.addIndex('rig_reports', ['rig_id', 'received_at'], { name: 'rig_reports_rig_id_received_at' });
    // Retention: the oldest rows across all rigs.
    await qi.addIndex('rig_reports', ['received_at'], { name: 'rig_reports_received_at' });
  },
  async down({ context: qi }) {
    await qi.dropTable('rig_reports');
    await qi.dropTable('rigs');
  },
};
