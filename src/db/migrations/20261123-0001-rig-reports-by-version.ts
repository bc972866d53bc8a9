import type { Migration } from './types.ts';

/**
 * The first report of each software version on each branch (`rigd fleet`'s newest version) is one
 * index lookup per (branch, version) instead of a scan of the whole history.
 */
export const rigReportsByVersion: Migration = {
  name: '20261123-0001-rig-reports-by-version',
  async up({ context: qi }) {
    await qi.addIndex('rig_reports', ['branch', 'version', 'received_at'], { name: 'rig_reports_branch_version_received_at' });
  },
  async down({ context: qi }) {
    await qi.removeIndex('rig_reports', 'rig_reports_branch_version_received_at');
  },
};
