import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** An API session: the token itself is never stored, only its SHA-256. */
export class Session extends Model<InferAttributes<Session>, InferCreationAttributes<Session>> {
  declare id: CreationOptional<number>;
  declare token_hash: string;
  declare user_id: number;
  declare expires_at: Date;
  declare last_used_at: Date;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Session {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends Session {};
    Bound.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        user_id: { type: DataTypes.INTEGER, allowNull: false },
        expires_at: { type: DataTypes.DATE, allowNull: false },
        last_used_at: { type: DataTypes.DATE, allowNull: false },
        created_at: DataTypes.DATE,
      },
      { sequelize, modelName: 'Session', tableName: 'sessions', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: false },
    );
    return Bound;
  }
}
