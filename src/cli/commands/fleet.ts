import type { Command } from 'commander';
import { fleetSummary, type FleetSummary } from '../../services/rigs/fleet.ts';
import { printJson, withReader } from '../context.ts';
import { renderTable } from '../table.ts';
import { printLines } from '../terminal-text.ts';

/** Rig-reported text (branch, version) in a table: control characters escaped by renderTable. */
function fleetText(f: FleetSummary): string {
  let out = `${f.rigs} rigs: ${Object.entries(f.by_status).map(([s, n]) => `${n} ${s}`).join(', ')}\n`;
  out += `\nby branch and version (newest first, by version order)\n`;
  out += renderTable(
    ['BRANCH', 'VERSION', 'RIGS', 'NEWEST'],
    f.by_branch.flatMap((b) => b.versions.map((v) => [b.branch, v.version, String(v.rigs), v.version === b.newest_version ? 'yes' : ''])),
  );
  const behind = f.by_branch.flatMap((b) => b.behind.map((r) => [b.branch, r.id, r.version, b.newest_version, r.status]));
  out += `\nrigs still on an old version (${behind.length})\n`;
  out += behind.length ? renderTable(['BRANCH', 'ID', 'VERSION', 'NEWEST', 'STATUS'], behind) : 'none\n';
  return out;
}

/** `rigd fleet [--json]`: counts by status, branch and version, and each branch's rollout. */
export async function fleetCommand(_opts: unknown, cmd: Command): Promise<void> {
  const { json } = cmd.optsWithGlobals<{ json?: boolean }>();
  const summary = await withReader(cmd, (reader, config) => fleetSummary(reader, config, new Date()));
  if (json) return printJson(summary);
  if (summary.rigs === 0) return printLines('no rig has reported yet');
  process.stdout.write(fleetText(summary));
}
