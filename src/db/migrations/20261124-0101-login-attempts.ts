import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

/**
 * The login throttle's attempts, shared by every rigd process on the database: one row per attempt
 * (counted against its login and its client from the moment it is reserved), at_ms in ms since the
 * epoch. A success forgets its login's failures by clearing their login_key; rows older than the
 * window are pruned.
 */
export const loginAttempts: Migration = {
  name: '20261124-0101-login-attempts',
  async up({ context: qi }) {
    await qi.createTable('login_attempts', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      login_key: { type: DataTypes.STRING(300), allowNull: true },
      client_key: { type: DataTypes.STRING(300), allowNull: false },
      at_ms: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('login_attempts', ['login_key', 'at_ms'], { name: 'login_attempts_login' });
    await qi.addIndex('login_attempts', ['client_key', 'at_ms'], { name: 'login_attempts_client' });
    await qi.addIndex('login_attempts', ['at_ms'], { name: 'login_attempts_at' });
  },
  async down({ context: qi }) {
    await qi.dropTable('login_attempts');
  },
};
