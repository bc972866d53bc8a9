import type { Command } from 'commander';
import { rigIdArgument } from './rig-id.ts';
import { rigDetail } from '../../services/rigs/detail.ts';
import { printJson, withReader } from '../context.ts';
import { rigDetailText } from '../views/rig-detail-text.ts';

/** `rigd rigs show ID [--json]`: one rig, its recent positions, uploads and captures. */
export async function rigsShowCommand(id: string, _opts: unknown, cmd: Command): Promise<void> {
  rigIdArgument(id);
  const { json } = cmd.optsWithGlobals<{ json?: boolean }>();
  const detail = await withReader(cmd, (reader, config) => rigDetail(reader, config, id, new Date()));
  if (json) return printJson(detail);
  process.stdout.write(rigDetailText(detail));
}
