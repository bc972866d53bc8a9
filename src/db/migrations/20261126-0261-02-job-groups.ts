import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * jobs.fair_group: the claim takes jobs round robin between groups (src/jobs/store.ts), so one group
 * with many queued jobs cannot hold back another's next one. Null: a job of no group.
 * captures.version_id: the storage version the capture was queued from (MinIO on a versioned bucket).
 */
export const jobGroups: Migration = {
  name: '20261126-0261-02-job-groups',
  async up({ context: qi }) {
    await qi.addColumn('jobs', 'fair_group', { type: DataTypes.STRING(128), allowNull: true });
    await qi.addIndex('jobs', ['fair_group', 'started_at'], { name: 'jobs_fair_group_started_at' });
    await qi.addColumn('captures', 'version_id', { type: DataTypes.STRING(128), allowNull: true });
  },
  async down({ context: qi }) {
    await qi.removeColumn('captures', 'version_id');
    await qi.removeIndex('jobs', 'jobs_fair_group_started_at');
    await qi.removeColumn('jobs', 'fair_group');
  },
};
