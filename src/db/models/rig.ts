import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A rig as of its last report. Its status (online/stale/offline) is computed from last_seen_at when read. */
export class Rig extends Model<InferAttributes<Rig>, InferCreationAttributes<Rig>> {
  /** The :id of PUT /api/v1/rigs/:id: a DNS label, lower-cased. */
  declare id: string;
  declare serial: string;
  /** local_ip as reported (an IP address), or null when the rig sent none. */
  declare lan_ip: string | null;
  /** The VPN peer address of the last report. */
  declare vpn_address: string;
  /** The VPN address the id is bound to (rigs.address_binding); null after `rigd rigs forget`. */
  declare bound_address: CreationOptional<string | null>;
  /** The address that registered the id. */
  declare registered_from: CreationOptional<string | null>;
  declare version: string;
  declare branch: string;
  declare latitude: number | null;
  declare longitude: number | null;
  declare last_seen_at: Date;
  /** Set by uploads; later captures inherit it. */
  declare current_project: CreationOptional<string | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Rig {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends Rig {};
    Bound.init(
      {
        id: { type: DataTypes.STRING(63), primaryKey: true },
        serial: { type: DataTypes.STRING(128), allowNull: false },
        lan_ip: { type: DataTypes.STRING(45), allowNull: true },
        vpn_address: { type: DataTypes.STRING(45), allowNull: false },
        bound_address: { type: DataTypes.STRING(45), allowNull: true },
        registered_from: { type: DataTypes.STRING(45), allowNull: true },
        version: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
        branch: { type: DataTypes.STRING(128), allowNull: false, defaultValue: '' },
        latitude: { type: DataTypes.DOUBLE, allowNull: true },
        longitude: { type: DataTypes.DOUBLE, allowNull: true },
        last_seen_at: { type: DataTypes.DATE, allowNull: false },
        current_project: { type: DataTypes.STRING(64), allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, modelName: 'Rig', tableName: 'rigs', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
    );
    return Bound;
  }
}
