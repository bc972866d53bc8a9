// The default /map (no page.map_tiles_url) in headless Chromium at 1280 and 420 px: the countries
// of Natural Earth (world-atlas 110m, served by rigd) drawn as a GeoJSON layer under the markers,
// every marker inside the view, no request leaving rigd; the rig page's track map fitted to the
// track; /map links back to /rigs. Screenshots in test-output/: map-offline-{1280,420}.png,
// rig-track-fitted-{1280,420}.png (look at them: land, coastlines and the markers on it).
// The browser runs in a viewer's network namespace and reaches rigd at its VPN name: in the root
// namespace every namespace another test file adds or removes meanwhile is a network change to
// Chromium, which then cancels the page's loads (ERR_NETWORK_CHANGED).
import test from 'tape';
import { existsSync, statSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { inNamespace, vpnOrigin, withPage, type OpenBrowser } from '../helpers/browser.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** Rigs with a fix: Cairo, Lisbon, Nairobi, Sydney, Santiago (and Hamburg, below). */
const RIGS: Record<string, [number, number]> = { cairo: [30.04, 31.24], lisbon: [38.72, -9.14], nairobi: [-1.29, 36.82], sydney: [-33.87, 151.21], santiago: [-33.45, -70.67] };
/** A drive of about 6 km west of Hamburg: the track the rig page must fit. */
const TRACK: [number, number][] = [[53.55, 9.9], [53.56, 9.93], [53.565, 9.96], [53.57, 9.99]];

let s: TestServer;
let net: Hosts;
/** rigd's address on the viewer's link. */
const GW = '10.144.191.1';
/** The pages' origin as the browser in the viewer's namespace asks for them. */
const origin = () => vpnOrigin(s.server.info.port);
/** Chromium in the viewer's namespace, resolving the VPN name to rigd there. */
const inViewer = (viewport?: { width: number; height: number }) => inNamespace(net.host('viewer').ns, GW, viewport);

test('setup: five rigs with a fix; one with a track over the last hours', async (t) => {
  net = await createHosts([{ name: 'viewer', addr: '10.144.191.2', gw: GW }]);
  s = await startServer({}, { host: '::' });
  const { Rig, RigReport } = s.app.db.models;
  const now = Date.now();
  await s.app.db.writes.run(async (transaction) => {
    for (const [id, [lat, lon]] of Object.entries(RIGS)) {
      await Rig.create({ id, serial: `S-${id}`, lan_ip: null, vpn_address: '10.144.105.9', version: '1.0', branch: 'main', latitude: lat, longitude: lon, last_seen_at: new Date(now), current_project: null }, { transaction });
    }
    const last = TRACK[TRACK.length - 1]!;
    await Rig.create({ id: 'hamburg', serial: 'S-hh', lan_ip: null, vpn_address: '10.144.105.10', version: '1.0', branch: 'main', latitude: last[0], longitude: last[1], last_seen_at: new Date(now), current_project: null }, { transaction });
    for (const [i, [lat, lon]] of TRACK.entries()) {
      await RigReport.create({ rig_id: 'hamburg', received_at: new Date(now - (TRACK.length - i) * 600_000), serial: 'S-hh', lan_ip: null, peer_address: '10.144.105.10', version: '1.0', branch: 'main', latitude: lat, longitude: lon }, { transaction });
    }
  });
  t.equal(await Rig.count(), 6, 'six rigs stored');
});

/** The part of the page's globals these checks read (the tests compile without the DOM library). */
type Win = {
  rigdMap: { state: { done: boolean } };
  rigdMapBase: { land: { done: boolean; countries: number; error: string | null } };
  rigdTrack?: {
    map: { getBounds(): { contains(b: unknown): boolean }; getZoom(): number; getBoundsZoom(b: unknown, inside: boolean, padding: unknown): number };
    line: { getBounds(): unknown };
  };
  innerWidth: number;
  innerHeight: number;
  document: { documentElement: { scrollWidth: number } };
};

async function shot(t: test.Test, browser: OpenBrowser, name: string) {
  const file = await browser.screenshot(name);
  t.ok(existsSync(file) && statSync(file).size > 5000, `screenshot ${file}`);
}

/** Boxes of the rig markers and of the map, in page pixels. */
async function markerBoxes(page: Page) {
  const map = await page.locator('#map').boundingBox();
  const boxes = await Promise.all((await page.locator('.leaflet-marker-icon.rig-marker').all()).map((m) => m.boundingBox()));
  return { map, boxes };
}

/**
 * Waits for the map page's markers and land; when they never come, fails with what the page saw
 * (its state, every answer and failed request, its errors) instead of a bare timeout.
 */
async function waitForMap(page: Page, browser: OpenBrowser, answers: string[]) {
  try {
    await page.waitForFunction(() => (globalThis as unknown as Win).rigdMap?.state.done === true && (globalThis as unknown as Win).rigdMapBase.land.done === true);
  } catch (err) {
    const seen = await page
      .evaluate(() => {
        const g = globalThis as unknown as { rigdMap?: { state: unknown }; rigdMapBase?: { land: unknown } };
        return JSON.stringify({ state: g.rigdMap?.state ?? null, land: g.rigdMapBase?.land ?? null });
      })
      .catch((e: Error) => `page not readable: ${e.message}`);
    throw new Error(`${(err as Error).message}\npage: ${seen}\nanswers: ${answers.join(', ')}\nerrors: ${browser.pageErrors.join(' | ')}`);
  }
}

/** Records each answer ("STATUS PATH") and each request that got none ("failed PATH: why"). */
function recordAnswers(page: Page, origin: string): string[] {
  const answers: string[] = [];
  page.on('response', (r) => answers.push(`${r.status()} ${r.url().replace(origin, '')}`));
  page.on('requestfailed', (r) => answers.push(`failed ${r.url().replace(origin, '')}: ${r.failure()?.errorText ?? '?'}`));
  return answers;
}

for (const width of [1280, 420]) {
  test(`/map at ${width} px without tiles: countries and coastlines from rigd under every marker; a link back to /rigs`, async (t) => {
    await withPage(
      async (page, browser) => {
        const origin = vpnOrigin(s.server.info.port);
        const requests: string[] = [];
        page.on('request', (r) => requests.push(r.url()));
        const answers = recordAnswers(page, origin);
        const res = await page.goto(`${origin}/map`);
        t.equal(res?.status(), 200, 'the map page');
        await waitForMap(page, browser, answers);
        const land = await page.evaluate(() => (globalThis as unknown as Win).rigdMapBase.land);
        t.equal(land.error, null, 'the countries loaded');
        t.ok(land.countries > 150, `${land.countries} countries in the layer`);
        const paths = await page.locator('.leaflet-land-pane path.land').count();
        t.ok(paths > 100, `${paths} country shapes drawn as SVG paths`);
        if (width === 1280) {
          // Russia and Fiji cross the antimeridian: drawn naively, one edge of theirs runs across
          // the whole world. No edge of a country may be longer than half the world, except
          // Antarctica's along the bottom of the map (south of 84 degrees).
          const { world, southY } = await page.evaluate(() => {
            const m = (globalThis as unknown as { rigdMap: { map: { getZoom(): number; latLngToLayerPoint(l: [number, number]): { y: number } } } }).rigdMap.map;
            return { world: 256 * 2 ** m.getZoom(), southY: m.latLngToLayerPoint([-84, 0]).y };
          });
          let longest = 0;
          for (const d of await page.locator('.leaflet-land-pane path.land').evaluateAll((els) => els.map((e) => (e as unknown as { getAttribute(n: string): string }).getAttribute('d')))) {
            for (const ring of d.split('M').filter(Boolean)) {
              const xy = (ring.match(/-?\d+(\.\d+)?/g) ?? []).map(Number);
              for (let i = 2; i + 1 < xy.length; i += 2) {
                if (xy[i + 1]! > southY && xy[i - 1]! > southY) continue;
                longest = Math.max(longest, Math.abs(xy[i]! - xy[i - 2]!));
              }
            }
          }
          t.ok(longest > 0 && longest < world / 2, `no country streaks across the map: the longest edge is ${Math.round(longest)} px of a ${world} px world`);
        }
        const [landZ, overlayZ, markersZ] = await page.evaluate((sels) => {
          const g = globalThis as unknown as { document: { querySelector(s: string): unknown }; getComputedStyle(e: unknown): { zIndex: string } };
          return sels.map((sel) => Number(g.getComputedStyle(g.document.querySelector(sel)).zIndex));
        }, ['.leaflet-land-pane', '.leaflet-overlay-pane', '.leaflet-marker-pane']);
        const under = { land: landZ!, overlay: overlayZ!, markers: markersZ! };
        t.ok(under.land < under.overlay && under.land < under.markers, `the land pane (z ${under.land}) lies under the lines (${under.overlay}) and the markers (${under.markers})`);
        const { map, boxes } = await markerBoxes(page);
        const clusters = await page.locator('.leaflet-marker-icon.marker-cluster').all();
        const inClusters = (await page.locator('.leaflet-marker-icon.marker-cluster span').allTextContents()).reduce((sum, c) => sum + Number(c), 0);
        t.equal(boxes.length + inClusters, Object.keys(RIGS).length + 1, `the six rigs: ${boxes.length} markers and ${inClusters} in ${clusters.length} cluster(s)`);
        const all = [...boxes, ...(await Promise.all(clusters.map((c) => c.boundingBox())))];
        t.ok(all.length > 0 && map !== null, `${all.length} marker(s) or cluster(s) drawn`);
        const inside = all.filter((b) => b && map && b.x >= map.x && b.y >= map.y && b.x + b.width <= map.x + map.width && b.y + b.height <= map.y + map.height);
        t.equal(inside.length, all.length, 'every marker lies inside the map view');
        t.equal(await page.locator('a[href="/rigs"]').first().isVisible(), true, 'a visible link back to /rigs');
        const scroll = await page.evaluate(() => (globalThis as unknown as Win).document.documentElement.scrollWidth);
        t.ok(scroll <= width, `no sideways scrolling (${scroll} px)`);
        t.deepEqual(requests.filter((u) => !u.startsWith(`${origin}/`)), [], `${requests.length} requests, none outside rigd`);
        t.ok(requests.includes(`${origin}/assets/world/countries-110m.json`), 'the countries come from rigd');
        await shot(t, browser, `map-offline-${width}`);
        t.deepEqual(browser.pageErrors, [], 'no page errors');
      },
      inViewer({ width, height: 800 }),
    );
  });

  test(`the rig page at ${width} px: the track map is fitted to the track`, async (t) => {
    await withPage(
      async (page, browser) => {
        await page.goto(`${origin()}/rigs/hamburg`);
        await page.waitForFunction(() => (globalThis as unknown as Win).rigdTrack !== undefined && (globalThis as unknown as Win).rigdMapBase.land.done === true);
        const fit = await page.evaluate(() => {
          const tr = (globalThis as unknown as Win).rigdTrack!;
          const bounds = tr.line.getBounds();
          return { contains: tr.map.getBounds().contains(bounds), zoom: tr.map.getZoom(), best: tr.map.getBoundsZoom(bounds, false, [40, 40]) };
        });
        t.ok(fit.contains, 'the whole track is in view');
        t.ok(fit.zoom >= fit.best - 1 && fit.zoom >= 11, `zoomed to the track (zoom ${fit.zoom}, the bounds fit at ${fit.best})`);
        const box = await page.locator('#track path.rig-track').boundingBox();
        const frame = await page.locator('#track').boundingBox();
        t.ok(box && frame && (box.width > frame.width * 0.4 || box.height > frame.height * 0.4), `the track fills the map (${Math.round(box?.width ?? 0)} of ${Math.round(frame?.width ?? 0)} px wide)`);
        t.ok(box && frame && box.x >= frame.x && box.x + box.width <= frame.x + frame.width && box.y >= frame.y && box.y + box.height <= frame.y + frame.height, 'and stays inside it');
        t.ok((await page.locator('#track path.land').count()) > 0, 'land drawn under the track');
        await shot(t, browser, `rig-track-fitted-${width}`);
        t.deepEqual(browser.pageErrors, [], 'no page errors');
      },
      inViewer({ width, height: 800 }),
    );
  });
}

test('a failed first load of the markers is tried again within seconds, not at the next refresh', async (t) => {
  await withPage(async (page, browser) => {
    let refused = 0;
    // The first two answers of /map/rigs.json are 503, as during a short database outage; then rigd answers.
    await page.route('**/map/rigs.json', async (route) => {
      if (refused < 2) {
        refused += 1;
        await route.fulfill({ status: 503, contentType: 'application/json', body: '{"status":"error","error":{"code":"unavailable","message":"database unavailable"}}' });
      } else {
        await route.continue();
      }
    });
    const answers = recordAnswers(page, origin());
    // A refresh of an hour: only the early retry can bring the markers within the wait's 60 s.
    await page.goto(`${origin()}/map?refresh=3600`);
    await page.waitForFunction(() => ((globalThis as unknown as { rigdMap?: { state: { failures: number } } }).rigdMap?.state.failures ?? 0) >= 1);
    const shown = await page.locator('.map-count').textContent();
    t.match(String(shown), /could not be loaded: rigs\.json answered 503; trying again/, `the page says so: ${shown}`);
    await waitForMap(page, browser, answers);
    t.equal(refused, 2, 'two refused loads, then the markers (tried again after 1 s and 2 s, not at the hourly refresh)');
    t.equal(await page.locator('.map-count').textContent(), '(6 rigs)', 'then the count of rigs');
    const state = await page.evaluate(() => (globalThis as unknown as { rigdMap: { state: { error: string | null; failures: number } } }).rigdMap.state);
    t.deepEqual([state.error, state.failures], [null, 0], 'no error left once loaded');
    t.deepEqual(browser.pageErrors.filter((e) => !/503/.test(e)), [], 'no page errors but the refused loads');
  }, inViewer());
});

test('the countries file: 110m TopoJSON, small, from rigd; the larger resolutions are not served', async (t) => {
  const res = await http(`${s.url}/assets/world/countries-110m.json`, { headers: { 'accept-encoding': 'identity' } });
  t.equal(res.status, 200, '200');
  t.match(String(res.headers['content-type']), /^application\/json/, 'JSON');
  t.ok(res.text.length < 150_000, `${res.text.length} bytes`);
  t.equal(JSON.parse(res.text).type, 'Topology', 'TopoJSON');
  const again = await http(`${s.url}/assets/world/countries-110m.json`, { headers: { 'if-none-match': String(res.headers.etag) } });
  t.equal(again.status, 304, 'revalidated with its ETag: 304, not sent again');
  t.equal((await http(`${s.url}/assets/world/countries-10m.json`)).status, 404, 'the 10m file is not served');
  const lib = await http(`${s.url}/assets/topojson-client/topojson-client.min.js`);
  t.equal(lib.status, 200, 'topojson-client served by rigd');
});

test('teardown', async () => {
  await s.close();
  await net.destroy();
});
