import type { Command } from 'commander';
import { acknowledge, listIncidents, type IncidentView } from '../../services/alerts/list.ts';
import { cliActor } from '../../services/audit/log.ts';
import { printJson, withApp, withReader } from '../context.ts';
import { UsageError } from '../fail.ts';
import { parseInterval } from '../interval.ts';
import { renderTable } from '../table.ts';
import { printLines } from '../terminal-text.ts';

interface AlertsOptions {
  json?: boolean;
  watch?: boolean;
  interval?: string;
}

/** The plain table's columns (the live view shows the same). */
export const ALERT_HEADER = ['ID', 'STATE', 'KIND', 'SUBJECT', 'OPENED', 'RESOLVED', 'WHAT'];

export function alertRow(i: IncidentView): string[] {
  return [String(i.id), i.state, i.kind, i.subject ?? '-', i.opened_at, i.resolved_at ?? '-', i.text];
}

/** `rigd alerts [--json] [--watch [--interval S]]`: open incidents, then those resolved in the last 24 h. */
export async function alertsCommand(opts: AlertsOptions, cmd: Command): Promise<void> {
  const intervalMs = parseInterval(opts.interval);
  if (opts.watch && !opts.json && process.stdout.isTTY) {
    const launch = import('../views/launch.tsx');
    launch.catch(() => undefined);
    return withReader(cmd, async (reader) => {
      await (await launch).watchAlerts({ load: () => listIncidents(reader, new Date()), intervalMs });
    });
  }
  const now = new Date();
  const incidents = await withReader(cmd, (reader) => listIncidents(reader, now));
  if (opts.json) return printJson({ open: incidents.filter((i) => i.state !== 'resolved').length, incidents, generated_at: now.toISOString() });
  if (incidents.length === 0) return printLines('no open incident, none resolved in the last 24 h');
  const open = incidents.filter((i) => i.state !== 'resolved').length;
  process.stdout.write(`${open} open, ${incidents.length - open} resolved in the last 24 h\n`);
  process.stdout.write(renderTable(ALERT_HEADER, incidents.map(alertRow)));
}

/** `rigd alerts ack ID`: silences an open incident (no repeats); it still resolves by itself. */
export async function alertsAckCommand(rawId: string, _opts: unknown, cmd: Command): Promise<void> {
  const { json } = cmd.optsWithGlobals<{ json?: boolean }>();
  if (!/^[1-9][0-9]{0,15}$/.test(rawId)) throw new UsageError(`incident id must be a positive whole number (as rigd alerts shows), got "${rawId}"`);
  const view = await withApp(cmd, (app) => acknowledge(app.db, Number(rawId), cliActor()));
  if (json) return printJson(view);
  printLines(`incident ${view.id} acknowledged: no more repeats; it resolves by itself when the condition ends`);
}
