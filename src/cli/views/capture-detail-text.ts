import type { CaptureDetail } from '../../services/captures/show.ts';
import { shellWord } from '../../services/shell-word.ts';
import { renderTable } from '../table.ts';
import { terminalText } from '../terminal-text.ts';
import { countOf, progressLine } from './capture-text.ts';

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '  ');
}

/** "2026-11-23T07:41:08Z .. 2026-11-23T09:02:11Z (by ts)", or '-' when the table has no readable time. */
export function spanText(t: CaptureDetail['tables'][number]): string {
  if (!t.time_column) return '-';
  if (!t.first || !t.last) return `- (${t.time_column}: no readable time)`;
  return `${t.first} .. ${t.last} (${t.time_column})`;
}

/** Why a capture lists no tables, with the command that queues it when that helps. */
function noTablesText(d: CaptureDetail): string {
  const again = `rigd ingest ${shellWord(d.key)}`;
  if (d.state === 'ingested') return 'none';
  if (d.state === 'failed') return `none, its ingestion failed; ${again} queues it again`;
  if (d.state === 'uploaded') return `known once ingested; ${again} queues it`;
  return 'known once ingested';
}

/** `rigd captures show ID`: the capture, its ingestion and its tables (rig-sent text escaped by renderTable and terminalText). */
export function captureDetailText(d: CaptureDetail): string {
  const fields: [string, string][] = [
    ['state', d.state],
    ['rig', d.rig_id ?? '-'],
    ['project', d.project ?? '-'],
    ['key', d.key],
    ['size', d.size === null ? '-' : `${d.size} bytes`],
    ['sha256', d.sha256 ?? '-'],
    ['attempts', String(d.attempts)],
    ['error', d.error_code || d.last_error ? `${d.error_code ?? 'error'}: ${d.last_error ?? ''}` : '-'],
    ['progress', d.progress ? progressLine({ state: d.state, progress: d.progress } as Parameters<typeof progressLine>[0]) : '-'],
    ['queued', d.created_at],
    ['finished', d.finished_at ?? '-'],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  let out = `capture ${d.id}: ${d.state}\n${fields.map(([k, v]) => terminalText(`  ${k.padEnd(width)}  ${v}`)).join('\n')}\n`;
  if (d.tables.length === 0) return `${out}\n${terminalText(`tables: ${noTablesText(d)}`)}\n`;
  out += `\ntables (${d.tables.length}, ${countOf(d.tables.reduce((n, t) => n + t.rows, 0), 'row')})\n`;
  out += indent(renderTable(['TABLE', 'ROWS', 'TIME SPAN', 'COLUMNS'], d.tables.map((t) => [t.name, String(t.rows), spanText(t), t.columns.map((c) => (c.type ? `${c.name} ${c.type}` : c.name)).join(', ')])));
  return out;
}
