import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '../../errors.ts';
import type { App } from '../../services/app.ts';
import { reimportCaptures, type Requeued } from '../../services/captures/reimport.ts';
import type { CaptureView } from '../../services/captures/service.ts';
import { printJson, withApp } from '../context.ts';
import { UsageError } from '../fail.ts';
import { parseSince } from '../since.ts';
import { terminalText } from '../terminal-text.ts';
import { summary } from '../views/capture-text.ts';

interface ReimportOptions {
  all?: boolean;
  rig?: string;
  since?: string;
  wait?: boolean;
  json?: boolean;
}

const POLL_MS = 500;

/** Some capture queued again ended failed: exit 1 naming them. */
class ReimportFailed extends DomainError {
  constructor(failed: CaptureView[]) {
    const list = failed.map((c) => `capture ${c.id} (${summary(c)})`).join('; ');
    super('unprocessable', 'reimport_failed', `${failed.length} capture(s) failed to import again: ${list}`);
  }
}

/** --since: an ISO 8601 time, or a duration back from now (24h, 7d); the error names both forms. */
function sinceTime(text: string): Date {
  const refused = () => new UsageError(`--since must be an ISO 8601 time such as 2026-11-01T00:00Z or a duration such as 24h or 7d, got ${JSON.stringify(text.slice(0, 40))}`);
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim())) {
    const at = new Date(text.trim());
    if (Number.isNaN(at.getTime())) throw refused();
    return at;
  }
  try {
    return new Date(Date.now() - parseSince(text));
  } catch (err) {
    throw err instanceof UsageError ? refused() : err;
  }
}

/** Polls the captures queued until none is queued or ingesting. */
async function waitAll(app: App, queued: Requeued[], out: (line: string) => void): Promise<CaptureView[]> {
  let last = '';
  for (;;) {
    const now = await Promise.all(queued.map((q) => app.captures.get(q.id)));
    const ingested = now.filter((c) => c.state === 'ingested').length;
    const failed = now.filter((c) => c.state === 'failed').length;
    const line = `${ingested}/${now.length} ingested${failed ? `, ${failed} failed` : ''}`;
    if (line !== last) out(line);
    last = line;
    if (ingested + failed === now.length) return now;
    await sleep(POLL_MS);
  }
}

/**
 * `rigd captures reimport --all|--rig ID|--since T [--wait] [--json]`: queues ingested captures for
 * a new import (rigd serve runs them) and prints each one queued.
 */
export async function capturesReimportCommand(_opts: unknown, cmd: Command): Promise<void> {
  const opts = cmd.optsWithGlobals<ReimportOptions>();
  if (!opts.all && opts.rig === undefined && opts.since === undefined) throw new UsageError('say which captures: --all, --rig ID or --since T');
  const since = opts.since === undefined ? undefined : sinceTime(opts.since);
  const out = (line: string) => {
    if (!opts.json) process.stdout.write(`${terminalText(line)}\n`);
  };
  const result = await withApp(cmd, async (app) => {
    const queued = await reimportCaptures(app.db, app.captures, { all: opts.all, rig: opts.rig, since });
    for (const q of queued) out(`capture ${q.id} (${q.key}) queued again`);
    out(queued.length === 0 ? 'no ingested capture matches: nothing queued' : `${queued.length} capture(s) queued; rigd serve imports them`);
    const final = opts.wait && queued.length > 0 ? await waitAll(app, queued, out) : null;
    return { queued, final };
  });
  if (opts.json) printJson(result.final ?? result.queued);
  const failed = (result.final ?? []).filter((c) => c.state === 'failed');
  if (failed.length > 0) throw new ReimportFailed(failed);
}
