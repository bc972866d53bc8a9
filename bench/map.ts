// The fleet map with 10,000 rigs (npm run bench:map): seeds rigs with fixes straight into the
// database, serves rigd on loopback, opens /map in headless Chromium and prints the time to the
// first full render (navigation start until the cluster layer has added every marker, as
// public/map.js reports it on window.rigdMap.state), then how long a zoom and a reload take.
// Needs /usr/bin/chromium (or RIGD_TEST_CHROMIUM). BENCH_RIGS changes the count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { openBrowser } from '../test/helpers/browser.ts';

const RIGS = Number(process.env.BENCH_RIGS ?? 10_000);
const STATUSES_AGO_S = [0, 0, 0, 1200, 7200];

/** What the page exposes (the bench compiles without the DOM library). */
type MapWindow = {
  rigdMap: {
    state: { done: boolean; firstRenderMs: number | null; added: number; total: number; loads: number };
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

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-map-'));
  const { config } = loadConfig({ env: {}, overrides: { data_dir: dataDir, log: { level: 'silent' } } });
  const app = await openApp(config);
  const rigd = await createServer(app, { host: '127.0.0.1', port: 0, log: silentLogger });
  await rigd.start();
  const browser = await openBrowser({ viewport: { width: 1280, height: 800 }, timeoutMs: 120_000 });
  try {
    const now = Date.now();
    const rows = Array.from({ length: RIGS }, (_, i) => {
      const [latitude, longitude] = fix(i);
      return {
        id: `rig${i}`,
        serial: `SN-${i}`,
        lan_ip: null,
        vpn_address: `10.144.${Math.floor(i / 250)}.${(i % 250) + 2}`,
        version: '3.1.0',
        branch: 'main',
        latitude,
        longitude,
        last_seen_at: new Date(now - STATUSES_AGO_S[i % STATUSES_AGO_S.length]! * 1000),
        current_project: null,
      };
    });
    const t0 = performance.now();
    await app.db.writes.run(async (transaction) => {
      for (let i = 0; i < rows.length; i += 1000) await app.db.models.Rig.bulkCreate(rows.slice(i, i + 1000), { transaction });
    });
    process.stdout.write(`seeded ${RIGS} rigs with fixes in ${Math.round(performance.now() - t0)} ms\n`);

    const url = `http://127.0.0.1:${rigd.info.port}`;
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
    await page.waitForFunction(() => (globalThis as unknown as MapWindow).rigdMap?.state.done === true, undefined, { timeout: 120_000 });
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
    process.stdout.write(`${JSON.stringify({ rigs: RIGS, jsonKiB: Math.round(body.length / 1024), firstRenderMs: Math.round(first.ms ?? NaN), longestTaskMs: longest, zoomMs: Math.round(zoom), reloadMs: Math.round(reload) })}\n`);
    process.exitCode = first.inLayer === RIGS && errors.length === 0 ? 0 : 1;
  } finally {
    await browser.close();
    await rigd.stop({ timeout: 2000 });
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
