import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A `rigd serve` process sharing this database (src/db/nodes.ts). */
export class Node extends Model<InferAttributes<Node>, InferCreationAttributes<Node>> {
  /** cluster.instance_id, or "<hostname>:<server.port>". */
  declare instance_id: string;
  declare hostname: string;
  declare pid: number;
  /** The rigd version it runs. */
  declare version: string;
  /** Random per process run: heartbeats and the clean stop match it (never host name + pid). */
  declare run_id: CreationOptional<string | null>;
  declare started_at: Date;
  declare heartbeat_at: Date;
  /** Set on a clean shutdown; null while it runs (or after it died). */
  declare stopped_at: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof Node {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends Node {};
    Bound.init(
      {
        instance_id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
        hostname: { type: DataTypes.STRING(255), allowNull: false },
        pid: { type: DataTypes.INTEGER, allowNull: false },
        version: { type: DataTypes.STRING(64), allowNull: false },
        run_id: { type: DataTypes.STRING(32), allowNull: true },
        started_at: { type: DataTypes.DATE, allowNull: false },
        heartbeat_at: { type: DataTypes.DATE, allowNull: false },
        stopped_at: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, modelName: 'Node', tableName: 'nodes', underscored: true, timestamps: false },
    );
    return Bound;
  }
}
