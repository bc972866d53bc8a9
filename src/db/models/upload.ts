import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export type UploadState = 'reserved' | 'uploaded' | 'expired';

/** One upload a rig announced with GET /api/v1/rigs/upload, and how it went. */
export class Upload extends Model<InferAttributes<Upload>, InferCreationAttributes<Upload>> {
  declare id: CreationOptional<number>;
  /** The rig whose VPN address asked; null when no rig has reported from that address yet. */
  declare rig_id: string | null;
  declare peer_address: string;
  declare key: string;
  declare expected_size: number;
  declare project: string | null;
  declare state: CreationOptional<UploadState>;
  declare bytes_seen: CreationOptional<number>;
  declare etag: CreationOptional<string | null>;
  declare url_expires_at: Date;
  /** When the monitor looks at storage again (drivers without a PUT of their own). */
  declare next_check_at: CreationOptional<Date | null>;
  declare checks: CreationOptional<number>;
  declare completed_at: CreationOptional<Date | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Upload {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends Upload {};
    Bound.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        rig_id: { type: DataTypes.STRING(63), allowNull: true },
        peer_address: { type: DataTypes.STRING(45), allowNull: false },
        key: { type: DataTypes.STRING(1024), allowNull: false },
        expected_size: { type: DataTypes.BIGINT, allowNull: false },
        project: { type: DataTypes.STRING(64), allowNull: true },
        state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'reserved' },
        bytes_seen: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        etag: { type: DataTypes.STRING(64), allowNull: true },
        url_expires_at: { type: DataTypes.DATE, allowNull: false },
        next_check_at: { type: DataTypes.DATE, allowNull: true },
        checks: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        completed_at: { type: DataTypes.DATE, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, modelName: 'Upload', tableName: 'uploads', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
    );
    return Bound;
  }
}
