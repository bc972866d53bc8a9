import type { CaptureView } from '../../services/captures/service.ts';
import { formatBytes, progressBar } from './progress-bar.ts';


/** What a capture is doing or how it ended: a bar while downloading, the step after, the result at the end. */
export function captureProgress(c: CaptureView): string {
  if (c.state === 'ingested' && c.tables) {
    const rows = c.tables.reduce((n, t) => n + t.rows, 0);
    return `${c.tables.length} tables, ${rows} rows`;
  }
  if (c.state === 'failed' || (c.state === 'queued' && c.last_error)) {
    return `${c.state === 'queued' ? 'retrying after ' : ''}${c.error_code ?? 'error'}: ${c.last_error ?? ''}`;
  }
  const p = c.progress;
  if (c.state === 'ingesting' && p) {
    if (p.step === 'download' && p.total) return `${progressBar(p.bytes, p.total)}  ${formatBytes(p.bytes)} / ${formatBytes(p.total)}`;
    if (p.step === 'download') return `download ${formatBytes(p.bytes)}`;
    if (p.step === 'import') return `import ${p.rows ?? 0} rows`;
    return p.step;
  }
  if (c.state === 'uploaded') return 'not queued (rigd ingest queues it)';
  return c.state === 'queued' ? 'waiting for rigd serve' : '';
}
