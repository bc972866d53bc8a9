import type { Command } from 'commander';
import { withStretches } from '../../services/rigs/availability.ts';
import { RIG_STATUSES, type RigStatus } from '../../services/rigs/status.ts';
import type { RigView } from '../../services/rigs/view.ts';
import { listRigs } from '../../services/rigs/queries.ts';
import { printJson, withReader } from '../context.ts';
import { UsageError } from '../fail.ts';
import { parseInterval } from '../interval.ts';
import { renderTable } from '../table.ts';
import { printLines } from '../terminal-text.ts';
import { RIG_SORTS, selectRigs, type RigFilter, type RigSort } from '../views/rig-list.ts';
import { timeAgo } from '../../services/time-ago.ts';

interface RigsOptions {
  json?: boolean;
  status?: string;
  branch?: string;
  sort?: string;
  watch?: boolean;
  interval?: string;
}

/** The plain table's columns (stable: scripts read them); the live view shows more. */
const HEADER = ['STATUS', 'ID', 'LAN IP', 'VPN ADDRESS', 'BRANCH (VERSION)', 'LAST REPORT', 'PROJECT'];
/** On a terminal: STATUS, ID and LAST REPORT always; then BRANCH, PROJECT, VPN ADDRESS, LAN IP. Addresses and times are never shortened. */
const FIT = { priorities: [0, 0, 4, 3, 1, 0, 2], floors: [Infinity, undefined, Infinity, Infinity, undefined, Infinity, undefined] };

function row(r: RigView, now: Date): string[] {
  return [
    r.status,
    r.id,
    r.lan_ip ?? '',
    r.vpn_address,
    `${r.branch} (${r.version})`,
    timeAgo(r.last_seen_at, now),
    r.current_project ?? '',
  ];
}

function parseOptions(opts: RigsOptions): { filter: RigFilter; sort: RigSort } {
  if (opts.status !== undefined && !(RIG_STATUSES as readonly string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${RIG_STATUSES.join(', ')}, got "${opts.status}"`);
  }
  const sort = opts.sort ?? 'id';
  if (!(RIG_SORTS as readonly string[]).includes(sort)) throw new UsageError(`--sort must be one of ${RIG_SORTS.join(', ')}, got "${sort}"`);
  return { filter: { status: opts.status as RigStatus | undefined, branch: opts.branch }, sort: sort as RigSort };
}

/**
 * `rigd rigs [--json] [--status S] [--branch B] [--sort id|last-seen] [--watch [--interval S]]`.
 * --watch on a terminal is a live Ink table; --watch --json prints NDJSON change events until
 * interrupted; --watch without a terminal prints the table once.
 */
export async function rigsCommand(opts: RigsOptions, cmd: Command): Promise<void> {
  const { filter, sort } = parseOptions(opts);
  const intervalMs = parseInterval(opts.interval);
  if (opts.watch && opts.json) {
    const [{ followJson }, { diffRigs }] = await Promise.all([import('../follow-json.ts'), import('../watch-events.ts')]);
    const diff: typeof diffRigs = (previous, current, at) => diffRigs(previous, current, at).filter((e) => selectRigs([e.rig], filter, sort).length > 0);
    return withReader(cmd, (reader, config) => followJson({ load: async () => selectRigs(await listRigs(reader, config, new Date()), {}, sort), diff, intervalMs }));
  }
  if (opts.watch && !opts.json && process.stdout.isTTY) {
    // The views load while the database opens.
    const launch = import('../views/launch.tsx');
    launch.catch(() => undefined);
    return withReader(cmd, async (reader, config) => {
      await (await launch).watchRigs({ load: () => listRigs(reader, config, new Date()), intervalMs, filter, sort });
    });
  }
  if (opts.json) {
    return printJson(
      await withReader(cmd, async (reader, config) => {
        const now = new Date();
        return withStretches(reader, config, selectRigs(await listRigs(reader, config, now, filter.status), filter, sort), now);
      }),
    );
  }
  const rigs = selectRigs(await withReader(cmd, (reader, config) => listRigs(reader, config, new Date(), filter.status)), filter, sort);
  if (rigs.length === 0) {
    const which = [filter.status, 'rigs', filter.branch && `on branch ${filter.branch}`].filter(Boolean).join(' ');
    printLines(filter.status || filter.branch ? `no ${which}` : 'no rig has reported yet');
    return;
  }
  // renderTable escapes control characters in every cell: rig-reported text never reaches the terminal raw.
  const now = new Date();
  process.stdout.write(renderTable(HEADER, rigs.map((r) => row(r, now)), FIT));
}
