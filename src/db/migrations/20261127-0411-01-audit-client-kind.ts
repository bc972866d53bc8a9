import type { Migration } from './types.ts';

/**
 * `rigd audit --client ADDRESS` and `--kind KIND` (src/db/audit.ts auditRows) find their entries by
 * index, in chain order, instead of reading the log from its start (or from `--since`): a stolen
 * rig's thousands of refusals stay one lookup away, however long the retention keeps them.
 */
export const auditClientKind: Migration = {
  name: '20261127-0411-01-audit-client-kind',
  async up({ context: qi }) {
    await qi.addIndex('audit_log', ['client', 'seq'], { name: 'audit_log_client_seq' });
    await qi.addIndex('audit_log', ['kind', 'seq'], { name: 'audit_log_kind_seq' });
  },
  async down({ context: qi }) {
    await qi.removeIndex('audit_log', 'audit_log_kind_seq');
    await qi.removeIndex('audit_log', 'audit_log_client_seq');
  },
};
