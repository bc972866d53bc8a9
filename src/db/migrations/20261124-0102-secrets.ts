import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * Secrets rigd generates for itself when the config names none (the session cookie's), kept in the
 * database on PostgreSQL so that every node sharing it uses the same one (on SQLite they stay files
 * in data_dir). The first writer wins: INSERT ... ON CONFLICT DO NOTHING, then read.
 */
export const secrets: Migration = {
  name: '20261124-0102-secrets',
  async up({ context: qi }) {
    await qi.createTable('secrets', {
      name: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      value: { type: DataTypes.STRING(256), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('secrets');
  },
};
