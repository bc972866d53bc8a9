// The one table bench/report-tail.ts prints: each figure, its target, pass or fail.
export interface Check {
  figure: string;
  value: string;
  target: string;
  ok: boolean;
}

export function renderTable(checks: Check[]): string {
  const rows = [['figure', 'measured', 'target', 'result'], ...checks.map((c) => [c.figure, c.value, c.target, c.ok ? 'pass' : 'FAIL'])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}
