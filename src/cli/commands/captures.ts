import type { Command } from 'commander';
import { CAPTURE_STATES } from '../../db/models/capture.ts';
import type { CaptureView } from '../../services/captures/service.ts';
import { printJson, withApp } from '../context.ts';
import { UsageError } from '../fail.ts';
import { emptyResult } from '../filter-text.ts';
import { parseInterval } from '../interval.ts';
import { renderTable } from '../table.ts';
import { summary } from '../views/capture-text.ts';
import { printLines } from '../terminal-text.ts';
import { timeAgo } from '../../services/time-ago.ts';

interface CapturesOptions {
  json?: boolean;
  state?: string;
  rig?: string;
  project?: string;
  limit?: string;
  watch?: boolean;
  interval?: string;
}

function row(c: CaptureView, now: Date): string[] {
  return [
    String(c.id),
    c.state,
    c.rig_id ?? '-',
    c.project ?? '',
    c.key,
    c.size === null ? '' : String(c.size),
    String(c.attempts),
    timeAgo(new Date(c.updated_at), now),
    summary(c),
  ];
}

/** `rigd captures [--json] [--state S] [--rig R] [--project P] [--limit N]`: captures, newest first. */
export async function capturesCommand(opts: CapturesOptions, cmd: Command): Promise<void> {
  if (opts.state !== undefined && !(CAPTURE_STATES as readonly string[]).includes(opts.state)) {
    throw new UsageError(`--state must be one of ${CAPTURE_STATES.join(', ')}, got "${opts.state}"`);
  }
  if (opts.limit !== undefined && !/^[1-9]\d{0,2}$/.test(opts.limit)) throw new UsageError('--limit must be 1-500');
  const list = { state: opts.state, rig: opts.rig, project: opts.project, limit: opts.limit ? Number(opts.limit) : 50 };
  const empty = emptyResult('captures', [['--state', opts.state], ['--rig', opts.rig], ['--project', opts.project]]);
  const intervalMs = parseInterval(opts.interval);
  if (opts.watch && opts.json) {
    // NDJSON change events until interrupted (src/cli/watch-events.ts).
    const [{ followJson }, { diffCaptures }] = await Promise.all([import('../follow-json.ts'), import('../watch-events.ts')]);
    return withApp(cmd, (app) => followJson({ load: async () => (await app.captures.list(list)).captures, diff: diffCaptures, intervalMs }), { readOnly: true });
  }
  if (opts.watch && !opts.json && process.stdout.isTTY) {
    // --watch on a terminal: a live view with a progress bar per download; otherwise print once.
    const launch = import('../views/launch.tsx');
    launch.catch(() => undefined);
    return withApp(cmd, async (app) => (await launch).watchCaptures({ load: async () => (await app.captures.list(list)).captures, intervalMs, empty }), { readOnly: true });
  }
  const page = await withApp(cmd, (app) => app.captures.list(list), { readOnly: true });
  if (opts.json) return printJson(page.captures);
  if (page.captures.length === 0) return printLines(empty);
  const now = new Date();
  process.stdout.write(
    renderTable(['ID', 'STATE', 'RIG', 'PROJECT', 'KEY', 'SIZE', 'ATTEMPTS', 'UPDATED', 'RESULT'], page.captures.map((c) => row(c, now))),
  );
}
