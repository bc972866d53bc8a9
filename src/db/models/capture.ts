import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export const CAPTURE_STATES = ['queued', 'ingesting', 'ingested', 'failed'] as const;
export type CaptureState = (typeof CAPTURE_STATES)[number];

/**
 * One capture database file in storage (one version of one object: bucket, key, etag) and its
 * ingestion: queued -> ingesting -> ingested | failed. Written with the job that ingests it.
 */
export class Capture extends Model<InferAttributes<Capture>, InferCreationAttributes<Capture>> {
  declare id: CreationOptional<number>;
  declare bucket: string;
  declare key: string;
  /** Storage's etag of the version notified (unquoted). */
  declare etag: string;
  /** Bytes: as storage or the event reported it, then as read. */
  declare size: number | null;
  declare rig_id: string | null;
  /** The upload's project, else the rig's current project when queued. */
  declare project: string | null;
  declare upload_id: number | null;
  /** The job that ingests it (the latest one when re-queued). */
  declare job_id: CreationOptional<number | null>;
  declare state: CreationOptional<CaptureState>;
  declare attempts: CreationOptional<number>;
  /** Why it failed, stable snake_case (e.g. not_sqlite, too_large, storage_error). */
  declare error_code: CreationOptional<string | null>;
  declare last_error: CreationOptional<string | null>;
  /** JSON text: {"step": "download", "bytes": 1024, "total": 4096}. */
  declare progress: CreationOptional<string | null>;
  declare sha256: CreationOptional<string | null>;
  /** JSON text: [{name, columns: [{name, type}], rows}]. */
  declare tables: CreationOptional<string | null>;
  declare page_size: CreationOptional<number | null>;
  declare page_count: CreationOptional<number | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
  declare started_at: CreationOptional<Date | null>;
  declare finished_at: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof Capture {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends Capture {};
    Bound.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        bucket: { type: DataTypes.STRING(63), allowNull: false },
        key: { type: DataTypes.STRING(1024), allowNull: false },
        etag: { type: DataTypes.STRING(64), allowNull: false },
        size: { type: DataTypes.BIGINT, allowNull: true },
        rig_id: { type: DataTypes.STRING(63), allowNull: true },
        project: { type: DataTypes.STRING(64), allowNull: true },
        upload_id: { type: DataTypes.INTEGER, allowNull: true },
        job_id: { type: DataTypes.INTEGER, allowNull: true },
        state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'queued' },
        attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        error_code: { type: DataTypes.STRING(32), allowNull: true },
        last_error: { type: DataTypes.TEXT, allowNull: true },
        progress: { type: DataTypes.TEXT, allowNull: true },
        sha256: { type: DataTypes.STRING(64), allowNull: true },
        tables: { type: DataTypes.TEXT, allowNull: true },
        page_size: { type: DataTypes.INTEGER, allowNull: true },
        page_count: { type: DataTypes.INTEGER, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
        started_at: { type: DataTypes.DATE, allowNull: true },
        finished_at: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, modelName: 'Capture', tableName: 'captures', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
    );
    return Bound;
  }
}
