import type { Command } from 'commander';
import { configFor, printJson } from '../context.ts';
import { printLines } from '../terminal-text.ts';

export async function migrateCommand(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const config = await configFor(cmd);
  const { upgradeDatabase } = await import('../../db/upgrade.ts');
  const { applied, executed, pending } = await upgradeDatabase(config.data_dir, config.database.url);
  if (opts.json) return printJson({ applied, executed, pending });
  printLines(...(applied.length ? applied.map((n) => `applied ${n}`) : ['database is up to date']));
}
