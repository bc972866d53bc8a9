import { DataTypes } from 'sequelize';
import type { Migration } from './types.ts';

export const usersAndSessions: Migration = {
  name: '20261122-0001-users-and-sessions',
  async up({ context: qi }) {
    await qi.createTable('users', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      username: { type: DataTypes.STRING(64), allowNull: false },
      username_key: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      email: { type: DataTypes.STRING(254), allowNull: false },
      email_key: { type: DataTypes.STRING(254), allowNull: false, unique: true },
      password_hash: { type: DataTypes.STRING(100), allowNull: false },
      is_admin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      rig_ui_settings: { type: DataTypes.TEXT, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.createTable('sessions', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      user_id: {
        type: DataTypes.INTEGER,
        allowNull: false,
        references: { model: 'users', key: 'id' },
        onDelete: 'CASCADE',
      },
      expires_at: { type: DataTypes.DATE, allowNull: false },
      last_used_at: { type: DataTypes.DATE, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.addIndex('sessions', ['user_id']);
    await qi.addIndex('sessions', ['expires_at']);
  },
  async down({ context: qi }) {
    await qi.dropTable('sessions');
    await qi.dropTable('users');
  },
};
