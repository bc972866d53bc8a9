// The statements bench/serve/statement-probe.mjs recorded, summed up: for each kind of statement the
// time from being handed to the driver to its callback (the pool's work and the wait for the main
// thread), and for each pair of statements that follow each other, the time from the first one's
// callback to the next one being handed over (the main thread's part). Means, p50 and p90 in ms.
//   node --import tsx bench/serve/statement-summary.ts FILE [seconds]
// seconds (default 8): only the records of the last seconds of the file (the measured run).
import { readFileSync } from 'node:fs';

type Rec = [sent: number, answered: number | null, sql: string];
const [file, lastArg] = process.argv.slice(2);
if (!file) throw new Error('usage: statement-summary.ts FILE [seconds]');
const all = (JSON.parse(readFileSync(file, 'utf8')) as Rec[]).sort((a, b) => a[0] - b[0]);
const end = all.at(-1)?.[0] ?? 0;
const recs = all.filter((r) => r[0] >= end - Number(lastArg ?? 8) * 1000);

// A statement's kind: its first words, without the values and the names that vary.
const kind = (sql: string) => sql.replace(/\s+/g, ' ').replace(/[`"]/g, '').split(/[ (]/).slice(0, 3).join(' ');
const stats = new Map<string, number[]>();
const add = (k: string, v: number) => (stats.get(k) ?? stats.set(k, []).get(k)!).push(v);
for (let i = 0; i < recs.length; i++) {
  const [sent, answered, sql] = recs[i]!;
  if (answered !== null) add(`run   ${kind(sql)}`, answered - sent);
  const prev = recs[i - 1];
  if (prev) add(`after ${kind(prev[2])} -> ${kind(sql)}`, sent - (prev[1] ?? prev[0]));
}
const begins = recs.filter((r) => /^BEGIN/.test(r[2]));
const span = begins.length > 1 ? begins.at(-1)![0] - begins[0]![0] : 0;
process.stdout.write(`${recs.length} statements over ${((recs.at(-1)?.[0] ?? 0) - (recs[0]?.[0] ?? 0)).toFixed(0)} ms; ${begins.length} transactions, one every ${begins.length > 1 ? (span / (begins.length - 1)).toFixed(2) : '-'} ms\n`);
const q = (v: number[], p: number) => v[Math.min(v.length - 1, Math.floor(v.length * p))]!;
const rows = [...stats].filter(([, v]) => v.length >= Math.max(10, begins.length / 4)).sort((a, b) => b[1].length - a[1].length);
for (const [k, v] of rows) {
  v.sort((a, b) => a - b);
  const mean = v.reduce((s, x) => s + x, 0) / v.length;
  process.stdout.write(`${k.padEnd(60)} n ${String(v.length).padStart(6)}  mean ${mean.toFixed(2)}  p50 ${q(v, 0.5).toFixed(2)}  p90 ${q(v, 0.9).toFixed(2)}\n`);
}
