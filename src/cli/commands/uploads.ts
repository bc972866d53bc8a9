import type { Command } from 'commander';
import type { UploadState } from '../../db/models/upload.ts';
import type { UploadView } from '../../services/uploads/service.ts';
import { printJson, withApp } from '../context.ts';
import { UsageError } from '../fail.ts';
import { emptyResult } from '../filter-text.ts';
import { parseInterval } from '../interval.ts';
import { renderTable } from '../table.ts';
import { printLines } from '../terminal-text.ts';
import { timeAgo } from '../../services/time-ago.ts';

const STATES: UploadState[] = ['reserved', 'uploaded', 'expired'];

interface UploadsOptions {
  json?: boolean;
  state?: string;
  limit?: string;
  watch?: boolean;
  interval?: string;
}

export function progressText(u: UploadView): string {
  if (u.size === 0) return u.state === 'uploaded' ? '100%' : '0%';
  return `${Math.floor((u.bytes_seen / u.size) * 100)}%`;
}

function row(u: UploadView, now: Date): string[] {
  return [
    String(u.id),
    u.state,
    u.rig_id ?? '-',
    u.key,
    String(u.size),
    progressText(u),
    u.project ?? '',
    timeAgo(new Date(u.created_at), now),
  ];
}

/** `rigd uploads [--json] [--state S] [--limit N]`: recent uploads, newest first, with progress. */
export async function uploadsCommand(opts: UploadsOptions, cmd: Command): Promise<void> {
  if (opts.state !== undefined && !(STATES as string[]).includes(opts.state)) {
    throw new UsageError(`--state must be one of ${STATES.join(', ')}, got "${opts.state}"`);
  }
  if (opts.limit !== undefined && !/^[1-9]\d{0,3}$/.test(opts.limit)) throw new UsageError('--limit must be 1-9999');
  const list = { state: opts.state as UploadState | undefined, limit: opts.limit ? Number(opts.limit) : 50 };
  const empty = emptyResult('uploads', [['--state', opts.state]]);
  const intervalMs = parseInterval(opts.interval);
  if (opts.watch && opts.json) {
    // NDJSON change events until interrupted (src/cli/watch-events.ts).
    const [{ followJson }, { diffUploads }] = await Promise.all([import('../follow-json.ts'), import('../watch-events.ts')]);
    return withApp(cmd, (app) => followJson({ load: () => app.uploads.list(list), diff: diffUploads, intervalMs }), { readOnly: true });
  }
  if (opts.watch && !opts.json && process.stdout.isTTY) {
    // --watch on a terminal: a live view with a progress bar per upload; otherwise print once.
    const launch = import('../views/launch.tsx');
    launch.catch(() => undefined);
    return withApp(cmd, async (app) => (await launch).watchUploads({ load: () => app.uploads.list(list), intervalMs, empty }), { readOnly: true });
  }
  const uploads = await withApp(cmd, (app) => app.uploads.list(list), { readOnly: true });
  if (opts.json) return printJson(uploads);
  if (uploads.length === 0) return printLines(empty);
  const now = new Date();
  process.stdout.write(renderTable(['ID', 'STATE', 'RIG', 'KEY', 'SIZE', 'PROGRESS', 'PROJECT', 'RESERVED'], uploads.map((u) => row(u, now))));
}
