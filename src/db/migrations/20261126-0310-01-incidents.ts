import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * Offline by each rig's own rhythm, and incidents. On rigs: the median interval between its last
 * reports (report_interval_s), how many intervals it was learned from (report_intervals) and the
 * last report it was learned up to (rhythm_at), refreshed by the alerts sweep. incidents: one row
 * per incident; open_key ("kind:subject") is set while it is open and unique, so one condition
 * opens one incident however many nodes sweep at once.
 */
export const incidents: Migration = {
  name: '20261126-0310-01-incidents',
  async up({ context: qi }) {
    await qi.addColumn('rigs', 'report_interval_s', { type: DataTypes.DOUBLE, allowNull: true });
    await qi.addColumn('rigs', 'report_intervals', { type: DataTypes.INTEGER, allowNull: true });
    await qi.addColumn('rigs', 'rhythm_at', { type: DataTypes.DATE, allowNull: true });
    await qi.createTable('incidents', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
      kind: { type: DataTypes.STRING(32), allowNull: false },
      subject: { type: DataTypes.STRING(300), allowNull: true },
      open_key: { type: DataTypes.STRING(340), allowNull: true },
      opened_at: { type: DataTypes.DATE, allowNull: false },
      last_notified_at: { type: DataTypes.DATE, allowNull: false },
      resolved_at: { type: DataTypes.DATE, allowNull: true },
      acked_at: { type: DataTypes.DATE, allowNull: true },
      acked_by: { type: DataTypes.STRING(300), allowNull: true },
      details: { type: DataTypes.TEXT, allowNull: false },
      count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
    });
    await qi.addIndex('incidents', ['open_key'], { name: 'incidents_open_key', unique: true });
    await qi.addIndex('incidents', ['resolved_at'], { name: 'incidents_resolved_at' });
    await qi.addIndex('incidents', ['kind', 'subject', 'resolved_at'], { name: 'incidents_kind_subject' });
  },
  async down({ context: qi }) {
    await qi.dropTable('incidents');
    await qi.removeColumn('rigs', 'rhythm_at');
    await qi.removeColumn('rigs', 'report_intervals');
    await qi.removeColumn('rigs', 'report_interval_s');
  },
};
