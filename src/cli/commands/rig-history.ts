import type { Command } from 'commander';
import { rigHistory, type HistoryEntry } from '../../services/rig-history.ts';
import { toCsv } from '../../server/csv.ts';
import { printJson, withReader } from '../context.ts';
import { UsageError } from '../fail.ts';
import { parseSince } from '../since.ts';
import { renderTable } from '../table.ts';
import { HISTORY_HEADER, historyRow } from '../views/rig-detail-text.ts';

interface HistoryOptions {
  since?: string;
  csv?: boolean;
  json?: boolean;
}

/** The API's CSV columns (GET /api/v1/rigs/:id/reports?format=csv); rig-reported text guarded against spreadsheet formulas. */
const CSV_COLUMNS: { name: string; get: (e: HistoryEntry) => unknown; text?: boolean }[] = [
  { name: 'received_at', get: (e) => e.received_at },
  { name: 'rig_serial', get: (e) => e.rig_serial, text: true },
  { name: 'gpsd_latitude', get: (e) => e.latitude },
  { name: 'gpsd_longitude', get: (e) => e.longitude },
  { name: 'local_ip', get: (e) => e.local_ip },
  { name: 'software_version', get: (e) => e.software_version, text: true },
  { name: 'git_branch', get: (e) => e.git_branch, text: true },
  { name: 'peer_address', get: (e) => e.peer_address },
];

/** `rigd rigs history ID [--since 24h] [--csv|--json]`: the rig's reports, newest first. */
export async function rigsHistoryCommand(id: string, _opts: unknown, cmd: Command): Promise<void> {
  const opts = cmd.optsWithGlobals<HistoryOptions>();
  if (opts.csv && opts.json) throw new UsageError('--csv and --json exclude each other');
  const sinceText = opts.since ?? '24h';
  const since = new Date(Date.now() - parseSince(sinceText));
  const history = await withReader(cmd, (reader, config) => rigHistory(reader, config, id, { since }, new Date()));
  if (history.truncated) process.stderr.write(`rigd: only the newest ${history.entries.length} reports are shown\n`);
  if (opts.json) return printJson(history.entries);
  if (opts.csv) {
    process.stdout.write(toCsv(CSV_COLUMNS, history.entries));
    return;
  }
  if (history.entries.length === 0) {
    process.stdout.write(`no report from ${history.rig} in the last ${sinceText.trim().toLowerCase()}\n`);
    return;
  }
  process.stdout.write(renderTable(HISTORY_HEADER, history.entries.map(historyRow)));
}
