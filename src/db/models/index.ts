import type { Sequelize } from 'sequelize';
import { Session } from './session.ts';
import { User } from './user.ts';
import { Job } from './job.ts';
import { Rig } from './rig.ts';
import { RigReport } from './rig-report.ts';
import { Upload } from './upload.ts';
import { Capture } from './capture.ts';
import { Node } from './node.ts';

/** Every model, initialised on one Sequelize instance. */
export function initModels(sequelize: Sequelize) {
  const models = {
    User: User.initModel(sequelize),
    Session: Session.initModel(sequelize),
    Job: Job.initModel(sequelize),
    Rig: Rig.initModel(sequelize),
    RigReport: RigReport.initModel(sequelize),
    Upload: Upload.initModel(sequelize),
    Capture: Capture.initModel(sequelize),
    Node: Node.initModel(sequelize),
  };
  models.Session.belongsTo(models.User, { foreignKey: 'user_id', as: 'user', onDelete: 'CASCADE' });
  // A capture's run state is its job's (read through this join).
  models.Capture.belongsTo(models.Job, { foreignKey: 'job_id', as: 'job', constraints: false });
  return models;
}

export type Models = ReturnType<typeof initModels>;
export { Session, User };
export { Job };
export { Rig, RigReport };
export { Upload };
export { Capture };
export { Node };
