import type { Command } from 'commander';
import { formatDistance } from 'date-fns';
import { RIG_STATUSES, type RigStatus } from '../../services/rig-status.ts';
import type { RigView } from '../../services/rigs.ts';
import { printJson, withApp } from '../context.ts';
import { UsageError } from '../fail.ts';
import { renderTable } from '../table.ts';

interface RigsOptions {
  json?: boolean;
  status?: string;
}

function row(r: RigView, now: Date): string[] {
  return [
    r.status,
    r.id,
    r.lan_ip ?? '',
    r.vpn_address,
    `${r.branch} (${r.version})`,
    formatDistance(r.last_seen_at, now, { addSuffix: true }),
    r.current_project ?? '',
  ];
}

/** `rigd rigs [--json] [--status online|stale|offline]`: the rig list, as a table or JSON. */
export async function rigsCommand(opts: RigsOptions, cmd: Command): Promise<void> {
  if (opts.status !== undefined && !(RIG_STATUSES as readonly string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${RIG_STATUSES.join(', ')}, got "${opts.status}"`);
  }
  const status = opts.status as RigStatus | undefined;
  const rigs = await withApp(cmd, (app) => app.rigs.list({ status }));
  if (opts.json) return printJson(rigs);
  if (rigs.length === 0) {
    process.stdout.write(status ? `no ${status} rigs\n` : 'no rig has reported yet\n');
    return;
  }
  // Rig-reported text holds no control characters (validated on report), so it is safe on a terminal.
  const now = new Date();
  process.stdout.write(renderTable(['STATUS', 'ID', 'LAN IP', 'VPN ADDRESS', 'BRANCH (VERSION)', 'LAST REPORT', 'PROJECT'], rigs.map((r) => row(r, now))));
}
