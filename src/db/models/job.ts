import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export const JOB_STATES = ['queued', 'running', 'done', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A durable background job (src/jobs): queued -> running -> done | failed, retried while queued. */
export class Job extends Model<InferAttributes<Job>, InferCreationAttributes<Job>> {
  declare id: CreationOptional<number>;
  /** Which handler runs it, e.g. "capture". */
  declare kind: string;
  /** JSON text. */
  declare payload: string;
  declare state: CreationOptional<JobState>;
  /** Claims so far (a claim counts even if its process died). */
  declare attempts: CreationOptional<number>;
  declare max_attempts: number;
  /** Not claimed before this time (backoff). */
  declare run_after: Date;
  /** "<node>/<host>/<pid>/<random>" of the runner holding the lease while running (src/jobs/lease-owner.ts). */
  declare lease_owner: CreationOptional<string | null>;
  declare lease_expires_at: CreationOptional<Date | null>;
  declare last_error: CreationOptional<string | null>;
  /** Stable snake_case code of the last failure (a JobError's code), e.g. "storage_error". */
  declare error_code: CreationOptional<string | null>;
  /** JSON text reported by the handler, e.g. {"step":"download","bytes":1024}. */
  declare progress: CreationOptional<string | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
  /** When the latest attempt was claimed. */
  declare started_at: CreationOptional<Date | null>;
  /** Claims go round robin between groups (a rig's captures are one group); null: no group. */
  declare fair_group: CreationOptional<string | null>;
  declare finished_at: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof Job {
    // A subclass per database: two apps in one process (tests) never share a binding.
    const Bound = class extends Job {};
    Bound.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        kind: { type: DataTypes.STRING(64), allowNull: false },
        payload: { type: DataTypes.TEXT, allowNull: false },
        state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'queued' },
        attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        max_attempts: { type: DataTypes.INTEGER, allowNull: false },
        run_after: { type: DataTypes.DATE, allowNull: false },
        lease_owner: { type: DataTypes.STRING(128), allowNull: true },
        lease_expires_at: { type: DataTypes.DATE, allowNull: true },
        last_error: { type: DataTypes.TEXT, allowNull: true },
        error_code: { type: DataTypes.STRING(64), allowNull: true },
        progress: { type: DataTypes.TEXT, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
        started_at: { type: DataTypes.DATE, allowNull: true },
        fair_group: { type: DataTypes.STRING(128), allowNull: true },
        finished_at: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, modelName: 'Job', tableName: 'jobs', underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
    );
    return Bound;
  }
}
