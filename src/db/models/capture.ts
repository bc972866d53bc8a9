import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type NonAttribute, type Sequelize } from 'sequelize';
import type { Job } from './job.ts';

export { CAPTURE_STATES, captureState, captureStateSql, jobStateOf, type CaptureState } from './capture-state.ts';

/**
 * One capture database file in storage (one version of one object: bucket, key, etag): its
 * identity, where it came from, and the results of its successful ingest. Its run state (state,
 * attempts, errors, progress, times) is its job's (job_id).
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
  /** The job that ingests it (the latest one when queued again); null: uploaded, not queued. */
  declare job_id: CreationOptional<number | null>;
  /** Storage's id of the version queued (MinIO on a versioned bucket); null: read by etag. */
  declare version_id: CreationOptional<string | null>;
  declare sha256: CreationOptional<string | null>;
  /** JSON text: CaptureTableSummary[] (src/db/capture-store/layout.ts). */
  declare tables: CreationOptional<string | null>;
  declare page_size: CreationOptional<number | null>;
  declare page_count: CreationOptional<number | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
  /** The job, when read with `include: 'job'`. */
  declare job?: NonAttribute<Job | null>;

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
        version_id: { type: DataTypes.STRING(128), allowNull: true },
        sha256: { type: DataTypes.STRING(64), allowNull: true },
        tables: { type: DataTypes.TEXT, allowNull: true },
        page_size: { type: DataTypes.INTEGER, allowNull: true },
        page_count: { type: DataTypes.INTEGER, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, modelName: 'Capture', tableName: 'captures', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
    );
    return Bound;
  }
}

