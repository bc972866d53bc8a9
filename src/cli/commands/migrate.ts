import type { Command } from 'commander';
import { configFor, printJson } from '../context.ts';
import { printLines } from '../terminal-text.ts';

export async function migrateCommand(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const config = await configFor(cmd);
  const { loadDialect } = await import('../../db/dialect/index.ts');
  const { migrate, migrationStatus } = await import('../../db/migrate.ts');
  const dialect = await loadDialect();
  const sequelize = dialect.connect(config.data_dir);
  try {
    const applied = await migrate(sequelize, config.data_dir);
    const status = await migrationStatus(sequelize);
    if (opts.json) return printJson({ applied, executed: status.executed, pending: status.pending });
    printLines(...(applied.length ? applied.map((n) => `applied ${n}`) : ['database is up to date']));
  } finally {
    await dialect.close(sequelize);
  }
}
