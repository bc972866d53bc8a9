import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * A node's run id: a random token each `rigd serve` process draws at start and writes with its
 * registration. Heartbeats and the clean stop match it, so a process knows its row from another
 * one's with the same host name and pid (containers: both PID 1 on a host called "gateway").
 */
export const nodeRunId: Migration = {
  name: '20261126-0272-21-node-run-id',
  async up({ context: qi }) {
    await qi.addColumn('nodes', 'run_id', { type: DataTypes.STRING(32), allowNull: true });
  },
  async down({ context: qi }) {
    await qi.removeColumn('nodes', 'run_id');
  },
};
