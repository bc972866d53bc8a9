import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * The nodes sharing this database (`rigd serve` processes): each registers at start under its
 * instance id, heartbeats, and marks itself stopped on a clean shutdown. Times come from the
 * database's clock on PostgreSQL (src/db/clock.ts).
 */
export const nodes: Migration = {
  name: '20261124-0103-nodes',
  async up({ context: qi }) {
    await qi.createTable('nodes', {
      instance_id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      hostname: { type: DataTypes.STRING(255), allowNull: false },
      pid: { type: DataTypes.INTEGER, allowNull: false },
      version: { type: DataTypes.STRING(64), allowNull: false },
      started_at: { type: DataTypes.DATE, allowNull: false },
      heartbeat_at: { type: DataTypes.DATE, allowNull: false },
      stopped_at: { type: DataTypes.DATE, allowNull: true },
    });
    // Doctor's listing: nodes heard from recently.
    await qi.addIndex('nodes', ['heartbeat_at'], { name: 'nodes_heartbeat_at' });
  },
  async down({ context: qi }) {
    await qi.dropTable('nodes');
  },
};
