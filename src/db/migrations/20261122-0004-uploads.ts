import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

export const uploads: Migration = {
  name: '20261122-0004-uploads',
  async up({ context: qi }) {
    await qi.createTable('uploads', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      rig_id: { type: DataTypes.STRING(63), allowNull: true },
      peer_address: { type: DataTypes.STRING(45), allowNull: false },
      key: { type: DataTypes.STRING(1024), allowNull: false },
      expected_size: { type: DataTypes.BIGINT, allowNull: false },
      project: { type: DataTypes.STRING(64), allowNull: true },
      state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'reserved' },
      bytes_seen: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      etag: { type: DataTypes.STRING(64), allowNull: true },
      url_expires_at: { type: DataTypes.DATE, allowNull: false },
      next_check_at: { type: DataTypes.DATE, allowNull: true },
      checks: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      completed_at: { type: DataTypes.DATE, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.addIndex('uploads', ['state', 'url_expires_at']);
    await qi.addIndex('uploads', ['key']);
    await qi.addIndex('uploads', ['created_at']);
    await qi.addIndex('uploads', ['rig_id']);
  },
  async down({ context: qi }) {
    await qi.dropTable('uploads');
  },
};
