import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export class User extends Model<InferAttributes<User>, InferCreationAttributes<User>> {
  /** Integer key; the API shows it as a decimal string (the seed's clients send it back as a number). */
  declare id: CreationOptional<number>;
  declare username: string;
  /** Lower-cased username: uniqueness is case-insensitive on every database. */
  declare username_key: string;
  declare email: string;
  declare email_key: string;
  declare password_hash: string;
  declare is_admin: CreationOptional<boolean>;
  /** JSON text, or null when unset. */
  declare rig_ui_settings: CreationOptional<string | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof User {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends User {};
    Bound.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        username: { type: DataTypes.STRING(64), allowNull: false },
        username_key: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        email: { type: DataTypes.STRING(254), allowNull: false },
        email_key: { type: DataTypes.STRING(254), allowNull: false, unique: true },
        password_hash: { type: DataTypes.STRING(100), allowNull: false },
        is_admin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        rig_ui_settings: { type: DataTypes.TEXT, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, modelName: 'User', tableName: 'users', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
    );
    return Bound;
  }
}
