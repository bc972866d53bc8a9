import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

export const jobs: Migration = {
  name: '20261122-0003-jobs',
  async up({ context: qi }) {
    await qi.createTable('jobs', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      kind: { type: DataTypes.STRING(64), allowNull: false },
      payload: { type: DataTypes.TEXT, allowNull: false },
      state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'queued' },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      max_attempts: { type: DataTypes.INTEGER, allowNull: false },
      run_after: { type: DataTypes.DATE, allowNull: false },
      lease_owner: { type: DataTypes.STRING(128), allowNull: true },
      lease_expires_at: { type: DataTypes.DATE, allowNull: true },
      last_error: { type: DataTypes.TEXT, allowNull: true },
      progress: { type: DataTypes.TEXT, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
      finished_at: { type: DataTypes.DATE, allowNull: true },
    });
    // The claim query: the oldest eligible queued job.
    await qi.addIndex('jobs', ['state', 'run_after'], { name: 'jobs_state_run_after' });
    // Lease sweeps and listings by kind.
    await qi.addIndex('jobs', ['state', 'lease_expires_at'], { name: 'jobs_state_lease_expires_at' });
    await qi.addIndex('jobs', ['kind', 'state'], { name: 'jobs_kind_state' });
  },
  async down({ context: qi }) {
    await qi.dropTable('jobs');
  },
};
