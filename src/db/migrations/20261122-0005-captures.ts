import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

export const captures: Migration = {
  name: '20261122-0005-captures',
  async up({ context: qi }) {
    await qi.createTable('captures', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      bucket: { type: DataTypes.STRING(63), allowNull: false },
      key: { type: DataTypes.STRING(1024), allowNull: false },
      etag: { type: DataTypes.STRING(64), allowNull: false },
      size: { type: DataTypes.BIGINT, allowNull: true },
      rig_id: { type: DataTypes.STRING(63), allowNull: true },
      project: { type: DataTypes.STRING(64), allowNull: true },
      upload_id: { type: DataTypes.INTEGER, allowNull: true },
      job_id: { type: DataTypes.INTEGER, allowNull: true },
      state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'queued' },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      error_code: { type: DataTypes.STRING(32), allowNull: true },
      last_error: { type: DataTypes.TEXT, allowNull: true },
      progress: { type: DataTypes.TEXT, allowNull: true },
      sha256: { type: DataTypes.STRING(64), allowNull: true },
      tables: { type: DataTypes.TEXT, allowNull: true },
      page_size: { type: DataTypes.INTEGER, allowNull: true },
      page_count: { type: DataTypes.INTEGER, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
      started_at: { type: DataTypes.DATE, allowNull: true },
      finished_at: { type: DataTypes.DATE, allowNull: true },
    });
    // One capture per stored object version: a repeated webhook or event finds this row.
    await qi.addIndex('captures', ['bucket', 'key', 'etag'], { name: 'captures_object', unique: true });
    await qi.addIndex('captures', ['state', 'id'], { name: 'captures_state' });
    await qi.addIndex('captures', ['rig_id', 'id'], { name: 'captures_rig' });
    await qi.addIndex('captures', ['project', 'id'], { name: 'captures_project' });
    await qi.addIndex('captures', ['job_id'], { name: 'captures_job' });
  },
  async down({ context: qi }) {
    await qi.dropTable('captures');
  },
};
