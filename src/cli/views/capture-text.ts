import type { CaptureView } from '../../services/captures/service.ts';
import type { CaptureTableSummary } from '../../db/capture-store/layout.ts';
import { formatBytes, progressBar } from './progress-bar.ts';

/** "1 row", "2 rows": a count with its noun in the right number (an English noun taking -s). */
export function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** "2026-11-23 07:41..09:02Z" (one day) or "2026-11-22 23:10..2026-11-23 01:02Z". */
export function shortSpan(first: string, last: string): string {
  const [d1, t1] = [first.slice(0, 10), first.slice(11, 16)];
  const [d2, t2] = [last.slice(0, 10), last.slice(11, 16)];
  return d1 === d2 ? `${d1} ${t1}..${t2}Z` : `${d1} ${t1}..${d2} ${t2}Z`;
}

/** One table of an ingested capture in a list: its rows, and its time span when it has one. */
function tableText(t: CaptureTableSummary): string {
  return `${t.name} ${countOf(t.rows, 'row')}${t.first && t.last ? ` (${shortSpan(t.first, t.last)})` : ''}`;
}

/** What a capture is doing or how it ended: a bar while downloading, the step after, the result at the end. */
export function captureProgress(c: CaptureView): string {
  if (c.state === 'ingested' && c.tables) {
    return c.tables.length === 0 ? 'no tables' : c.tables.map(tableText).join('; ');
  }
  if (c.state === 'failed' || (c.state === 'queued' && c.last_error)) {
    return `${c.state === 'queued' ? 'retrying after ' : ''}${c.error_code ?? 'error'}: ${c.last_error ?? ''}`;
  }
  const p = c.progress;
  if (c.state === 'ingesting' && p) {
    if (p.step === 'download' && p.total) return `${progressBar(p.bytes, p.total)}  ${formatBytes(p.bytes)} / ${formatBytes(p.total)}`;
    if (p.step === 'download') return `download ${formatBytes(p.bytes)}`;
    if (p.step === 'import') return `import ${countOf(p.rows ?? 0, 'row')}`;
    return p.step;
  }
  if (c.state === 'uploaded') return 'not queued (rigd ingest queues it)';
  return c.state === 'queued' ? 'waiting for rigd serve' : '';
}

/** One line on how a capture stands: its tables and rows, its error, its step or what queues it. */
export function summary(c: CaptureView): string {
  if (c.state === 'ingested' && c.tables) {
    const rows = c.tables.reduce((n, t) => n + t.rows, 0);
    return `${countOf(c.tables.length, 'table')}, ${countOf(rows, 'row')}`;
  }
  if (c.state === 'failed' || (c.state === 'queued' && c.last_error)) return `${c.error_code ?? 'error'}: ${c.last_error ?? ''}`;
  if (c.state === 'ingesting' && c.progress) return progressLine(c);
  if (c.state === 'uploaded') return 'not queued (rigd ingest queues it)';
  return '';
}

/** "download 1048576/4194304 bytes (25%)", "inspect:quick_check" or "import 120000 rows". */
export function progressLine(c: CaptureView): string {
  const p = c.progress;
  if (!p) return c.state;
  if (p.step === 'download' && p.total) return `download ${p.bytes}/${p.total} bytes (${Math.floor((p.bytes / p.total) * 100)}%)`;
  if (p.step === 'download') return `download ${p.bytes} bytes`;
  if (p.step === 'import') return `import ${countOf(p.rows ?? 0, 'row')}`;
  return p.step;
}
