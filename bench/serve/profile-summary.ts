// A .cpuprofile (node --cpu-prof) summed up: self time by function and by file, and the total
// (self + callees) of the functions named on the command line. For docs/perf/report-path.md.
//   node --import tsx bench/serve/profile-summary.ts FILE.cpuprofile [top] [function ...]
// BENCH_PROFILE_LAST=S: only the samples of the profile's last S seconds (the measured run, when
// the server stopped right after it), the start-up and warm-up left out.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, ...names] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [top] [function ...]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const top = Number(topArg ?? 30);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// Time per sample: its delta (µs).
const selfUs = new Map<number, number>();
const from = profile.endTime - Number(process.env.BENCH_PROFILE_LAST ?? Infinity) * 1e6;
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at >= from) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const short = (url: string) => url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^file:\/\/.*\/(dist|src)\//, '$1/').replace(/^node:/, 'node:');
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const fnSelf = new Map<string, number>();
const fileSelf = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  add(fnSelf, label(n), us);
  add(fileSelf, short(n.callFrame.url) || `(${n.callFrame.functionName})`, us);
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
print('self time by function', fnSelf);
print('self time by file', fileSelf);
// Inclusive time of named functions: a sample counts once if any ancestor frame has the name.
for (const name of names) {
  let us = 0;
  for (const [id, t] of selfUs) {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      if (byId.get(cur)!.callFrame.functionName === name) {
        us += t;
        break;
      }
    }
  }
  console.log(`total of ${name}: ${pct(us)} ${(us / 1000).toFixed(0)} ms`);
}
