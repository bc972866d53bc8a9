import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** One report of a rig (the seed's device location record), kept for rigs.history_retention_days. */
export class RigReport extends Model<InferAttributes<RigReport>, InferCreationAttributes<RigReport>> {
  declare id: CreationOptional<number>;
  declare rig_id: string;
  declare received_at: Date;
  declare serial: string;
  declare lan_ip: string | null;
  /** The VPN address the report came from. */
  declare peer_address: string;
  declare version: string;
  declare branch: string;
  declare latitude: number | null;
  declare longitude: number | null;

  static initModel(sequelize: Sequelize): typeof RigReport {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends RigReport {};
    Bound.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        rig_id: { type: DataTypes.STRING(63), allowNull: false },
        received_at: { type: DataTypes.DATE, allowNull: false },
        serial: { type: DataTypes.STRING(128), allowNull: false },
        lan_ip: { type: DataTypes.STRING(45), allowNull: true },
        peer_address: { type: DataTypes.STRING(45), allowNull: false },
        version: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
        branch: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
        latitude: { type: DataTypes.DOUBLE, allowNull: true },
        longitude: { type: DataTypes.DOUBLE, allowNull: true },
      },
      { sequelize, modelName: 'RigReport', tableName: 'rig_reports', underscored: true, timestamps: false },
    );
    return Bound;
  }
}
