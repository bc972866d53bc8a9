import type { Command } from 'commander';
import { rigIdArgument } from './rig-id.ts';
import { withApp } from '../context.ts';
import { printLines } from '../terminal-text.ts';

/** `rigd rigs rebind ID ADDRESS`: the rig id belongs to ADDRESS from now on. */
export async function rigsRebindCommand(id: string, address: string, _opts: unknown, cmd: Command): Promise<void> {
  rigIdArgument(id);
  const bound = await withApp(cmd, (app) => app.rigs.rebind(id, address));
  printLines(`rig ${id.toLowerCase()} is bound to ${bound}; its reports from any other address are refused`);
}

/** `rigd rigs forget ID`: the rig id is bound to no address; its next report binds it. */
export async function rigsForgetCommand(id: string, _opts: unknown, cmd: Command): Promise<void> {
  rigIdArgument(id);
  await withApp(cmd, (app) => app.rigs.forget(id));
  printLines(`rig ${id.toLowerCase()} is bound to no address; its next report, from any address, binds it (its history is kept)`);
}
