import type { CaptureView } from '../../services/captures.ts';
import { formatBytes, progressBar } from './progress-bar.ts';

/** Keys and errors come from rigs and files: control characters are shown escaped, never sent to the terminal. */
export function safeText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** What a capture is doing or how it ended: a bar while downloading, the step after, the result at the end. */
export function captureProgress(c: CaptureView): string {
  if (c.state === 'ingested' && c.tables) {
    const rows = c.tables.reduce((n, t) => n + t.rows, 0);
    return `${c.tables.length} tables, ${rows} rows`;
  }
  if (c.state === 'failed' || (c.state === 'queued' && c.last_error)) {
    return safeText(`${c.state === 'queued' ? 'retrying after ' : ''}${c.error_code ?? 'error'}: ${c.last_error ?? ''}`);
  }
  const p = c.progress;
  if (c.state === 'ingesting' && p) {
    if (p.step === 'download' && p.total) return `${progressBar(p.bytes, p.total)}  ${formatBytes(p.bytes)} / ${formatBytes(p.total)}`;
    if (p.step === 'download') return `download ${formatBytes(p.bytes)}`;
    return safeText(p.step);
  }
  return c.state === 'queued' ? 'waiting for rigd serve' : '';
}
