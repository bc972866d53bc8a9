import type { Sequelize } from 'sequelize';
import { Session } from './session.ts';
import { User } from './user.ts';
import { Job } from './job.ts';

/** Every model, initialised on one Sequelize instance. */
export function initModels(sequelize: Sequelize) {
  const models = {
    User: User.initModel(sequelize),
    Session: Session.initModel(sequelize),
    Job: Job.initModel(sequelize),
  };
  models.Session.belongsTo(models.User, { foreignKey: 'user_id', as: 'user', onDelete: 'CASCADE' });
  return models;
}

export type Models = ReturnType<typeof initModels>;
export { Session, User };
export { Job };
