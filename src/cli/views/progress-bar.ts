/** A text progress bar: `█████░░░░░  45%` (no colour, fixed width, clamped to 0..100 %). */
export function progressBar(done: number, total: number, width = 20): string {
  const fraction = total > 0 ? Math.min(Math.max(done / total, 0), 1) : done > 0 ? 1 : 0;
  const filled = Math.round(fraction * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${String(Math.floor(fraction * 100)).padStart(3)}%`;
}

/** Bytes for people: 512 B, 1.5 KiB, 20.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
