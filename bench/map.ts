// The fleet map with 10,000 rigs (npm run bench:map), as shipped: the rigs and their fixes are
// written into a fresh data_dir (`rigd migrate`, then SQL through a connection of the bench's own)
// before `bin/rigd serve` starts as its own process with the default config (only data_dir set;
// request logging as shipped, into a file); headless Chromium opens /map from loopback (how the
// page is reached: page.allow is loopback and vpn.cidr) and the bench prints the time to the first
// full render (navigation start until the cluster layer has added every marker, as public/map.js
// reports it on window.rigdMap.state), how long a zoom and a reload take, and rigd serve's RSS.
// Run by hand: npm run bench:map (builds dist/). Needs /usr/bin/chromium (or RIGD_TEST_CHROMIUM).
// Env: BENCH_RIGS (default 10000), BENCH_KEEP=1 (keep the data_dir and rigd's log).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openBrowser } from '../test/helpers/browser.ts';
import { rssKb } from './proc.ts';
import { servePid } from './serve/cpu.ts';
import { describeRun } from './serve/describe.ts';
import { rigdCli, startRigd } from './serve/rigd.ts';
import { withConnection } from './tail/seed.ts';

const RIGS = Number(process.env.BENCH_RIGS ?? 10_000);
const STATUSES_AGO_S = [0, 0, 0, 1200, 7200];

/** What the page exposes (the bench compiles without the DOM library). */
type MapWindow = {
  rigdMap: {
    state: { done: boolean; firstRenderMs: number | null; added: number; total: number; loads: number; error: string | null };
    cluster: { getLayers(): unknown[] };
    map: { setZoom(z: number, o: object): void; getZoom(): number; once(e: string, f: () => void): void };
    reload(): Promise<void>;
  };
};

/** Deterministic scatter over Europe (a gateway's fleet is regional, so clusters are dense). */
function fix(i: number): [number, number] {
  const a = Math.sin(i * 12.9898) * 43758.5453;
  const b = Math.sin(i * 78.233) * 12345.6789;
  return [36 + (a - Math.floor(a)) * 24, -8 + (b - Math.floor(b)) * 36];
}

const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', ' +00:00');
const quote = (v: string | number | null) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${v}'`);

/** RIGS rigs with fixes and a mix of statuses, 1,000 rows a statement, one transaction. */
async function seedRigs(dataDir: string): Promise<void> {
  const now = Date.now();
  await withConnection(dataDir, async (exec) => {
    await exec('BEGIN');
    for (let from = 0; from < RIGS; from += 1000) {
      const values = Array.from({ length: Math.min(1000, RIGS - from) }, (_, k) => {
        const i = from + k;
        const [latitude, longitude] = fix(i);
        const seen = stamp(now - STATUSES_AGO_S[i % STATUSES_AGO_S.length]! * 1000);
        const row = [`rig${i}`, `SN-${i}`, null, `10.144.${Math.floor(i / 250)}.${(i % 250) + 2}`, '3.1.0', 'main', latitude, longitude, seen, null, stamp(now), stamp(now)];
        return `(${row.map(quote).join(', ')})`;
      });
      await exec(`INSERT INTO rigs (id, serial, lan_ip, vpn_address, version, branch, latitude, longitude, last_seen_at, current_project, created_at, updated_at) VALUES ${values.join(', ')}`);
    }
    await exec('COMMIT');
  });
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-map-'));
  const dataDir = path.join(work, 'data');
  mkdirSync(dataDir);
  const t0 = performance.now();
  await rigdCli(dataDir, ['migrate']);
  await seedRigs(dataDir);
  process.stdout.write(`seeded ${RIGS} rigs with fixes in ${Math.round(performance.now() - t0)} ms (before rigd serve starts; not measured)\n`);
  const rigd = await startRigd({ dataDir, logFile: path.join(work, 'rigd.log') });
  const pid = servePid(dataDir);
  process.stdout.write(describeRun(rigd));
  const browser = await openBrowser({ viewport: { width: 1280, height: 800 }, timeoutMs: 120_000 }).catch(async (err: unknown) => {
    await rigd.stop();
    throw err;
  });
  try {
    const rssIdle = rssKb(pid);
    const url = `http://127.0.0.1:${rigd.port}`;
    const j0 = performance.now();
    const json = await fetch(`${url}/map/rigs.json`);
    const body = await json.text();
    process.stdout.write(`GET /map/rigs.json: ${json.status}, ${(body.length / 1024).toFixed(0)} KiB, ${Math.round(performance.now() - j0)} ms (server ${(Number(json.headers.get('x-runtime')) * 1000).toFixed(0)} ms)\n`);

    const page = browser.page;
    // Main-thread tasks over 50 ms while the page loads: how long the page could not answer a click.
    await page.addInitScript(() => {
      const g = globalThis as unknown as { __longTasks: number[]; PerformanceObserver: new (f: (l: { getEntries(): { duration: number }[] }) => void) => { observe(o: object): void } };
      g.__longTasks = [];
      new g.PerformanceObserver((list) => list.getEntries().forEach((e) => g.__longTasks.push(e.duration))).observe({ type: 'longtask', buffered: true });
    });
    await page.goto(`${url}/map`);
    await page.waitForFunction(() => (globalThis as unknown as MapWindow).rigdMap?.state.done === true, undefined, { timeout: 120_000 }).catch(async (err: Error) => {
      // Say where the page stood (its fetch error, markers added so far) beside the timeout.
      const state = await page.evaluate(() => JSON.stringify((globalThis as unknown as MapWindow).rigdMap?.state ?? null)).catch(() => 'unknown');
      throw new Error(`${err.message}; the page's state: ${state}; page errors: ${browser.pageErrors.join('; ') || 'none'}`);
    });
    const first = await page.evaluate(() => {
      const m = (globalThis as unknown as MapWindow).rigdMap;
      return { ms: m.state.firstRenderMs, added: m.state.added, total: m.state.total, inLayer: m.cluster.getLayers().length };
    });
    const longTasks = await page.evaluate(() => (globalThis as unknown as { __longTasks: number[] }).__longTasks);
    const longest = Math.round(Math.max(0, ...longTasks));
    process.stdout.write(`first full render: ${Math.round(first.ms ?? NaN)} ms from navigation start (${first.inLayer} of ${first.total} markers in the cluster layer); longest main-thread task ${longest} ms (${longTasks.length} over 50 ms)\n`);

    const zoom = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const g = globalThis as unknown as MapWindow & { requestAnimationFrame(f: () => void): void };
          const m = g.rigdMap.map;
          const z0 = performance.now();
          m.once('zoomend', () => g.requestAnimationFrame(() => resolve(performance.now() - z0)));
          m.setZoom(m.getZoom() + 2, { animate: false });
        }),
    );
    const reload = await page.evaluate(async () => {
      const r0 = performance.now();
      await (globalThis as unknown as MapWindow).rigdMap.reload();
      return performance.now() - r0;
    });
    const drawn = await page.locator('.leaflet-marker-icon').count();
    process.stdout.write(`zoom in by 2: ${Math.round(zoom)} ms to the next frame; reload of ${RIGS} rigs (markers updated in place): ${Math.round(reload)} ms; ${drawn} marker or cluster icons in the DOM\n`);
    const errors = browser.pageErrors;
    if (errors.length) process.stdout.write(`page errors: ${errors.join('; ')}\n`);
    const rssEnd = rssKb(pid);
    process.stdout.write(`rigd serve RSS (pid ${pid}): ${Math.round(rssIdle / 1024)} MB before the page, ${Math.round(rssEnd / 1024)} MB after the render, zoom and reload\n`);
    process.stdout.write(`${JSON.stringify({ rigs: RIGS, rssIdleMB: Math.round(rssIdle / 1024), rssEndMB: Math.round(rssEnd / 1024), jsonKiB: Math.round(body.length / 1024), firstRenderMs: Math.round(first.ms ?? NaN), longestTaskMs: longest, zoomMs: Math.round(zoom), reloadMs: Math.round(reload) })}\n`);
    process.exitCode = first.inLayer === RIGS && errors.length === 0 ? 0 : 1;
  } finally {
    await browser.close();
    await rigd.stop();
    if (process.env.BENCH_KEEP) process.stdout.write(`kept: ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
