// What a rig report allocates, and what of it survives the young generation, by function: `bin/rigd
// serve` (default config, its own process, started with --inspect on a loopback port) under the
// report load of bench:report-tail, sampled by V8's heap profiler through the inspector protocol.
// Two measured runs of AB_N reports each (after a warm-up):
//   allocated: HeapProfiler.startSampling with includeObjectsCollectedByMinorGC and ...MajorGC, so
//              every sampled object counts, whenever it died;
//   survived:  ...MajorGC only: an object freed by a scavenge leaves the profile, one promoted to the
//              old space (or still alive at the end) stays. What a report keeps past two scavenges.
// Printed: bytes per report by function, by file and by group (docs/perf/report-path.md#how-to-profile-the-shipped-process).
//   npm run bench:report-alloc -- [--engine sqlite|postgres] [top]
// Env: AB_N (reports per measured run, default 20000), AB_SUBNET (third octet of the rig network,
// default 223), ALLOC_INTERVAL (sampling interval in bytes, default 4096), ALLOC_OUT (a directory:
// the two .heapprofile files are written there, for Chrome's DevTools).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHosts } from '../../test/helpers/netns.ts';
import { engineFlag, openEngine } from './engine.ts';
import { loadRun, type LoadSpec } from './load.ts';
import { startRigd } from './rigd.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface SampleNode {
  callFrame: CallFrame;
  selfSize: number;
  children: SampleNode[];
}
interface HeapProfile {
  head: SampleNode;
}

const args = process.argv.slice(2);
const top = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--engine') ?? 25);
const N = Number(process.env.AB_N ?? 20000);
const SUBNET = Number(process.env.AB_SUBNET ?? 223);
const INTERVAL = Number(process.env.ALLOC_INTERVAL ?? 4096);
const OUT = process.env.ALLOC_OUT;
const GW = `10.144.${SUBNET}.1`;
if (typeof WebSocket !== 'function') throw new Error('run with node --experimental-websocket (the inspector speaks WebSocket)');

/** The inspector protocol over one WebSocket: post(method, params) -> result. */
async function inspector(url: string) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
  });
  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const w = msg.id === undefined ? undefined : waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id!);
    if (msg.error) w.reject(new Error(msg.error.message));
    else w.resolve(msg.result);
  });
  return {
    post<T>(method: string, params: object = {}): Promise<T> {
      const id = next++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise<T>((resolve, reject) => waiting.set(id, { resolve: resolve as (v: unknown) => void, reject }));
    },
    close: () => ws.close(),
  };
}

const short = (url: string) => url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^file:\/\/.*\/(dist|src)\//, '$1/');
/** The group an allocation site belongs to: rigd's own code by directory, a package, or node. */
function group(url: string): string {
  const s = short(url);
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s);
  if (pkg) return pkg[1]!;
  const own = /^(?:dist|src)\/([^/]+(?:\/[^/]+)?)\//.exec(s);
  if (own) return `rigd ${own[1]}`;
  if (s.startsWith('dist/')) return 'rigd dist';
  if (s.startsWith('node:')) return `node ${s.slice(5).split('/')[0]}`;
  return s ? s : '(V8/native)';
}

/** Bytes by function (self), by file and by group; a site's bytes also go to its nearest frame of rigd's own code. */
function summarise(profile: HeapProfile) {
  const byFn = new Map<string, number>();
  const byGroup = new Map<string, number>();
  const byOwn = new Map<string, number>();
  let total = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const walk = (n: SampleNode, own: string | null) => {
    const f = n.callFrame;
    const s = short(f.url);
    const here = s.startsWith('dist/') || s.startsWith('src/') ? `${f.functionName || '(anonymous)'} ${s}:${f.lineNumber + 1}` : own;
    if (n.selfSize > 0) {
      total += n.selfSize;
      add(byFn, `${f.functionName || '(anonymous)'} ${s || '(native)'}:${f.lineNumber + 1}`, n.selfSize);
      add(byGroup, group(f.url), n.selfSize);
      add(byOwn, here ?? '(no rigd frame on the stack)', n.selfSize);
    }
    for (const c of n.children) walk(c, here);
  };
  walk(profile.head, null);
  return { total, byFn, byGroup, byOwn };
}

function print(title: string, profile: HeapProfile, reports: number) {
  const { total, byFn, byGroup, byOwn } = summarise(profile);
  const per = (b: number) => `${(b / reports / 1024).toFixed(2).padStart(7)} KB`;
  process.stdout.write(`\n== ${title}: ${per(total)} per report (${reports} reports) ==\n`);
  for (const [name, m] of [['by group', byGroup], ['by function (self)', byFn], ["by rigd's nearest own frame", byOwn]] as const) {
    process.stdout.write(`-- ${name}\n`);
    for (const [k, b] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${per(b)}  ${((100 * b) / total).toFixed(1).padStart(5)} %  ${k}\n`);
  }
}

const engine = engineFlag(args);
const work = mkdtempSync(path.join(tmpdir(), 'rigd-alloc-'));
const dataDir = path.join(work, 'data');
mkdirSync(dataDir);
const db = await openEngine(engine, 'rigd_bench_alloc');
const net = await createHosts([{ name: 'rigs', addr: `10.144.${SUBNET}.2`, gw: GW }]);
const spec: LoadSpec = { net, from: 'rigs', host: GW, connections: 100, rigs: 1000 };
const rigd = await startRigd({
  dataDir,
  databaseUrl: db.url,
  env: { RIGD_RIGS_NEW_IDS_PER_ADDRESS_PER_HOUR: '10000000' },
  logFile: path.join(work, 'rigd.log'),
  nodeFlags: ['--inspect=127.0.0.1:0'],
});
try {
  const ws = /Debugger listening on (ws:\/\/\S+)/.exec(rigd.output());
  if (!ws) throw new Error(`no inspector address in rigd's output:\n${rigd.output()}`);
  const session = await inspector(ws[1]!);
  const url = `http://${GW}:${rigd.port}`;
  await loadRun(spec, url, '3');
  await session.post('HeapProfiler.enable');
  for (const [title, minor] of [['allocated', true], ['survived (promoted or still alive)', false]] as const) {
    await session.post('HeapProfiler.collectGarbage');
    await session.post('HeapProfiler.startSampling', { samplingInterval: INTERVAL, includeObjectsCollectedByMinorGC: minor, includeObjectsCollectedByMajorGC: true });
    const run = await loadRun(spec, url, `n${N}`);
    const { profile } = await session.post<{ profile: HeapProfile }>('HeapProfiler.stopSampling');
    if (OUT) {
      mkdirSync(OUT, { recursive: true });
      writeFileSync(path.join(OUT, `${minor ? 'allocated' : 'survived'}.heapprofile`), JSON.stringify(profile));
    }
    print(title, profile, run.ok + run.non2xx);
    process.stdout.write(`(${Math.round(run.rps)} req/s under the profiler, non2xx ${run.non2xx}, errors ${run.errors})\n`);
  }
  session.close();
} finally {
  await rigd.stop();
  await net.destroy();
  db.stop();
  rmSync(work, { recursive: true, force: true });
}
