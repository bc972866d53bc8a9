import type { Command } from 'commander';
import { rigIdArgument } from './rig-id.ts';
import { reportsCsv } from '../../services/rigs/report-csv.ts';
import { rigHistory } from '../../services/rigs/history.ts';
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

/** `rigd rigs history ID [--since 24h] [--csv|--json]`: the rig's reports, newest first. */
export async function rigsHistoryCommand(id: string, _opts: unknown, cmd: Command): Promise<void> {
  rigIdArgument(id);
  const opts = cmd.optsWithGlobals<HistoryOptions>();
  if (opts.csv && opts.json) throw new UsageError('--csv and --json exclude each other');
  const sinceText = opts.since ?? '24h';
  const since = new Date(Date.now() - parseSince(sinceText));
  const history = await withReader(cmd, (reader, config) => rigHistory(reader, config, id, { since }, new Date()));
  if (history.truncated) process.stderr.write(`rigd: only the newest ${history.entries.length} reports are shown\n`);
  if (opts.json) return printJson(history.entries);
  if (opts.csv) {
    process.stdout.write(reportsCsv(history.entries));
    return;
  }
  if (history.entries.length === 0) {
    process.stdout.write(`no report from ${history.rig} in the last ${sinceText.trim().toLowerCase()}\n`);
    return;
  }
  process.stdout.write(renderTable(HISTORY_HEADER, history.entries.map(historyRow)));
}
