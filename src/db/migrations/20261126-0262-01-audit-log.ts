import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * The audit log: one row per security-relevant action, chained by hash (each row carries the
 * previous row's hash), seq the position in the chain. audit_head is one row: the newest entry
 * (seq and hash; appends lock this row, so several nodes append to one chain) and the anchor of
 * pruning (the seq and hash of the last entry removed by retention, 0 and 64 zeros before any).
 * The row is made by the first append (src/db/audit.ts), so a new database's tables start empty
 * (what `rigd db copy` fills).
 */
export const auditLog: Migration = {
  name: '20261126-0262-01-audit-log',
  async up({ context: qi }) {
    await qi.createTable('audit_log', {
      seq: { type: DataTypes.BIGINT, primaryKey: true, allowNull: false },
      at_ms: { type: DataTypes.BIGINT, allowNull: false },
      kind: { type: DataTypes.STRING(64), allowNull: false },
      actor: { type: DataTypes.STRING(300), allowNull: true },
      client: { type: DataTypes.STRING(100), allowNull: true },
      subject: { type: DataTypes.STRING(300), allowNull: true },
      details: { type: DataTypes.TEXT, allowNull: false },
      prev_hash: { type: DataTypes.STRING(64), allowNull: false },
      hash: { type: DataTypes.STRING(64), allowNull: false },
    });
    await qi.addIndex('audit_log', ['at_ms'], { name: 'audit_log_at' });
    await qi.createTable('audit_head', {
      id: { type: DataTypes.INTEGER, primaryKey: true, allowNull: false },
      head_seq: { type: DataTypes.BIGINT, allowNull: false },
      head_hash: { type: DataTypes.STRING(64), allowNull: false },
      pruned_seq: { type: DataTypes.BIGINT, allowNull: false },
      pruned_hash: { type: DataTypes.STRING(64), allowNull: false },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('audit_head');
    await qi.dropTable('audit_log');
  },
};
