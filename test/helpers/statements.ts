// The SQL statements a Sequelize instance runs while recording: Sequelize's beforeQuery hook gives
// each query its own logging function (public hook and query options), whatever the instance's own
// logging setting.
import type { Sequelize } from 'sequelize';

export function recordStatements(sequelize: Sequelize): { statements: string[]; stop: () => void } {
  const statements: string[] = [];
  const name = `record-statements-${Math.random()}`;
  sequelize.addHook('beforeQuery', name, (_options, query) => {
    query.options.logging = (sql: string) => void statements.push(sql);
  });
  return { statements, stop: () => void sequelize.removeHook('beforeQuery', name) };
}
