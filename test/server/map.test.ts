// /map and the track on /rigs/{id} in headless Chromium at 1280 and 420 px. Rigs report from VPN
// addresses (network namespaces); the browser runs in the viewer's namespace and reaches rigd at
// its VPN name. (In the root namespace, every namespace another test file adds or removes meanwhile
// is a network change to Chromium, which then cancels the page's loads with ERR_NETWORK_CHANGED.)
// Markers match the rigs with a fix, coloured by status; a hostile branch shows as text in a popup;
// the popup links to the rig's page; with no tile URL the page makes no request outside rigd, with
// one the tiles come from it; a reload keeps the operator's view and adds a new rig; 403 outside
// the VPN. Screenshots in test-output/: map-1280.png, map-420.png, rig-track-1280.png.
import test from 'tape';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { existsSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { inNamespace, VPN_HOST, vpnOrigin, withPage, type OpenBrowser } from '../helpers/browser.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** rigd's address on the viewer's link. */
const GW = '10.144.190.1';
const XSS_BRANCH = '<img src=x onerror="window.__pwned=1">';
const XSS_VERSION = '<script>window.__pwned=2</script>';
/** A 1x1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const COLOURS = { online: 'rgb(34, 163, 74)', stale: 'rgb(224, 161, 0)', offline: 'rgb(154, 161, 171)' };
/** Rigs with a fix and what the map must show for them (far enough apart not to cluster at 1280 px). */
const WITH_FIX: Record<string, keyof typeof COLOURS> = { 'rig-a': 'online', 'rig-b': 'stale', 'rig-c': 'offline', evil: 'online' };

let net: Hosts;
let s: TestServer;
let port = 0;
let tiles: HttpServer;
let tilePaths: string[] = [];
let tiled: TestServer;
/** When the hostile rig reported (its popup's time is worded from it). */
let evilReportedAt = 0;

/** Chromium in the viewer's namespace, resolving the VPN name to rigd there. */
const inViewer = (viewport?: { width: number; height: number }) => inNamespace(net.host('viewer').ns, GW, viewport);

function report(id: string, from: string, f: Record<string, string>) {
  return net.request('viewer', {
    url: `http://10.144.190.1:${port}/api/v1/rigs/${id}`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(f).toString(),
    localAddress: from,
  });
}

test('setup: five rigs report from the VPN (four with a fix, one hostile); one stale, one offline; a tile server', async (t) => {
  net = await createHosts([
    { name: 'viewer', addr: '10.144.190.2', gw: '10.144.190.1', extraAddrs: ['10.144.190.3', '10.144.190.4', '10.144.190.5', '10.144.190.6', '10.144.190.7'] },
    { name: 'outside', addr: '10.145.190.2', gw: '10.145.190.1' },
  ]);
  // Online for 15 min after a report (rig-b, 20 min ago, is still stale): the file's browser tests
  // may take minutes on a busy machine, and its last one still finds rig-a online.
  s = await startServer({ rigs: { online_after_s: 900 } }, { host: '::' });
  port = Number(s.server.info.port);
  // rig-a drives through Berlin: three fixes, the last one current.
  const track = [
    ['52.40', '13.20'],
    ['52.45', '13.30'],
    ['52.52', '13.405'],
  ];
  for (const [lat, lon] of track) {
    const r = await report('rig-a', '10.144.190.2', { rig_serial: 'SA', software_version: '1.0', git_branch: 'main', gpsd_latitude: lat!, gpsd_longitude: lon! });
    t.equal(r.status, 200, `rig-a at ${lat}, ${lon}`);
  }
  const res = await Promise.all([
    report('rig-b', '10.144.190.3', { rig_serial: 'SB', software_version: '1.0', git_branch: 'main', gpsd_latitude: '48.0', gpsd_longitude: '2.0' }),
    report('rig-c', '10.144.190.4', { rig_serial: 'SC', software_version: '1.0', git_branch: 'main', gpsd_latitude: '40.0', gpsd_longitude: '-4.0' }),
    report('evil', '10.144.190.5', { rig_serial: 'SE', software_version: XSS_VERSION, git_branch: XSS_BRANCH, gpsd_latitude: '44.0', gpsd_longitude: '8.0' }),
    report('nofix', '10.144.190.6', { rig_serial: 'SN', software_version: '1.0', git_branch: 'main' }),
  ]);
  t.deepEqual(res.map((r) => r.status), [200, 200, 200, 200], 'four more reports accepted');
  evilReportedAt = Date.now();
  const { Rig, RigReport } = s.app.db.models;
  const ago = (ms: number) => new Date(Date.now() - ms);
  await s.app.db.writes.run(async (transaction) => {
    await Rig.update({ last_seen_at: ago(20 * 60_000) }, { where: { id: 'rig-b' }, transaction });
    await Rig.update({ last_seen_at: ago(3 * 3600_000) }, { where: { id: 'rig-c' }, transaction });
    // A fix from two days ago: older than the track's 24 hours.
    await RigReport.create({ rig_id: 'rig-a', received_at: ago(48 * 3600_000), serial: 'SA', lan_ip: null, peer_address: '10.144.190.2', version: '1.0', branch: 'main', latitude: 10, longitude: 10 }, { transaction });
    // lostfix had a fix 2 h ago; its last report, a minute ago, had none: it stays on the map at that fix.
    await Rig.create({ id: 'lostfix', serial: 'SL', lan_ip: null, vpn_address: '10.144.190.8', version: '1.0', branch: 'main', latitude: null, longitude: null, last_seen_at: ago(60_000), current_project: null }, { transaction });
    await RigReport.create({ rig_id: 'lostfix', received_at: ago(2 * 3600_000), serial: 'SL', lan_ip: null, peer_address: '10.144.190.8', version: '1.0', branch: 'main', latitude: 60, longitude: 25 }, { transaction });
    await RigReport.create({ rig_id: 'lostfix', received_at: ago(60_000), serial: 'SL', lan_ip: null, peer_address: '10.144.190.8', version: '1.0', branch: 'main', latitude: null, longitude: null }, { transaction });
  });

  tiles = createHttpServer((req, res) => {
    tilePaths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length, 'access-control-allow-origin': '*' });
    res.end(PNG);
  });
  await new Promise<void>((resolve) => tiles.listen(0, '0.0.0.0', resolve));
  const tilePort = (tiles.address() as AddressInfo).port;
  tiled = await startServer({ page: { map_tiles_url: `http://${GW}:${tilePort}/{z}/{x}/{y}.png` } }, { host: '::' });
  await tiled.app.db.writes.run(async (transaction) => {
    await tiled.app.db.models.Rig.create(
      { id: 'solo', serial: 'S', lan_ip: null, vpn_address: '10.144.190.9', version: '1', branch: 'main', latitude: 47.0, longitude: 8.5, last_seen_at: new Date(), current_project: null },
      { transaction },
    );
  });
});

/** The part of the DOM these checks use (the tests compile without the DOM library). */
type MapWindow = {
  rigdMap: {
    state: { done: boolean; loads: number; rigs: number };
    map: { setZoom(z: number, o: object): void; getCenter(): { lat: number; lng: number }; getZoom(): number; panBy(p: [number, number], o: object): void; latLngToContainerPoint(l: [number, number]): { x: number; y: number }; getSize(): { x: number; y: number } };
  };
  rigdTrack?: { points: number };
  __pwned?: number;
  getComputedStyle(el: unknown): { backgroundColor: string; opacity: string };
};
async function loaded(page: Page) {
  // An upper bound for a busy machine (a first page also starts the browser's caches), not a timing.
  await page.waitForFunction(() => (globalThis as unknown as MapWindow).rigdMap?.state.done === true, undefined, { timeout: 60_000 });
}

/** Individual rig markers plus the rigs inside each cluster, as drawn in the DOM. */
async function drawnRigs(page: Page): Promise<{ markers: number; clusters: number; inClusters: number }> {
  const markers = await page.locator('.leaflet-marker-icon.rig-marker').count();
  const counts = await page.locator('.leaflet-marker-icon.marker-cluster span').allTextContents();
  return { markers, clusters: counts.length, inClusters: counts.reduce((sum, c) => sum + Number(c), 0) };
}

async function shot(t: test.Test, browser: OpenBrowser, name: string) {
  const file = await browser.screenshot(name);
  t.ok(existsSync(file) && statSync(file).size > 5000, `screenshot ${file}`);
}

/** Every request the page makes, to check where they go. */
/**
 * Closes the open popup by its close button and waits until no popup is left. A click that lands while
 * the map still pans to show the popup may hit the map or a marker instead (a marker opens its own
 * popup): the close button of whatever popup is open is clicked again, for at most a minute.
 */
async function closePopups(page: Page): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await page
      .locator('.leaflet-popup-close-button')
      .first()
      .click({ timeout: 5000 })
      .catch(() => undefined);
    try {
      await page.locator('.leaflet-popup').waitFor({ state: 'detached', timeout: 5000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

function recordRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (r) => urls.push(r.url()));
  return urls;
}

test('/map at 1280 px: a marker per rig with a fix, coloured by status; popups as text; the link to the rig page; no request outside rigd', async (t) => {
  await withPage(async (page, browser) => {
    const requests = recordRequests(page);
    const origin = vpnOrigin(port);
    // The page's clock, run by the test: its "less than a minute ago" must not depend on how long a
    // busy machine took from the report to the popup (the page load alone may take most of a minute).
    await page.clock.install();
    const res = await page.goto(`${origin}/map`);
    t.equal(res?.status(), 200, 'map page served over loopback');
    await loaded(page);
    t.deepEqual(await drawnRigs(page), { markers: 5, clusters: 0, inClusters: 0 }, 'five markers (the rig that never had a fix has none; the one that lost its fix stays at its last one), no cluster');
    t.equal(await page.locator('.leaflet-marker-icon.rig-marker-last-fix').count(), 1, 'one distinct marker: at a last known fix');
    t.equal(await page.locator('.leaflet-marker-icon.rig-marker-last-fix').getAttribute('title'), 'lostfix', 'the rig whose last report had no fix');
    t.equal(await page.locator('.leaflet-marker-icon.rig-marker-last-fix').evaluate((el) => (globalThis as unknown as MapWindow).getComputedStyle(el).opacity), '0.6', 'faded');
    await page.locator('.leaflet-marker-icon[title="lostfix"]').click();
    const fixPopup = page.locator('.leaflet-popup-content .rig-popup .last-fix');
    await fixPopup.waitFor();
    t.equal(await fixPopup.textContent(), 'No fix in the last report; last fix about 2 hours ago', 'its popup says how old the fix is');
    // Its popup fades out: gone before the next one opens.
    await closePopups(page);
    for (const [id, status] of Object.entries(WITH_FIX)) {
      const colour = await page.locator(`.leaflet-marker-icon[title="${id}"]`).evaluate((el) => (globalThis as unknown as MapWindow).getComputedStyle(el).backgroundColor);
      t.equal(colour, COLOURS[status], `${id}: ${status} colour ${COLOURS[status]}`);
    }
    t.equal(await page.locator('.map-count').textContent(), '(5 rigs)', 'count in the heading');

    // The page's clock back to a few seconds after the hostile rig's report, then running on.
    await page.clock.setSystemTime(evilReportedAt + 5000);
    await page.locator('.leaflet-marker-icon[title="evil"]').click();
    const popup = page.locator('.leaflet-popup-content .rig-popup');
    await popup.waitFor();
    t.equal(await popup.locator('.branch').textContent(), `${XSS_BRANCH} (${XSS_VERSION})`, 'hostile branch and version shown as text');
    t.equal(await popup.locator('.id').textContent(), 'evil', 'rig id');
    t.equal(await popup.locator('.status').textContent(), 'online', 'status');
    t.equal(await popup.locator('time').textContent(), 'less than a minute ago', 'last report in words');
    t.match((await popup.locator('time').getAttribute('datetime'))!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'with the ISO time');
    t.ok((await popup.locator('time').getAttribute('title'))!.length > 10, 'and the absolute time as title');
    t.equal(await page.locator('.leaflet-popup img, .leaflet-popup script').count(), 0, 'no element created from the rig text');
    t.equal(await page.evaluate(() => (globalThis as unknown as MapWindow).__pwned ?? null), null, 'no injected code ran');
    t.equal(await popup.locator('a').getAttribute('href'), '/rigs/evil', 'link to the rig page');
    // The popup fades in: wait for it to be opaque before the picture.
    await page.waitForFunction(() => {
      const g = globalThis as unknown as { document: { querySelector(s: string): unknown } } & MapWindow;
      return g.getComputedStyle(g.document.querySelector('.leaflet-popup')).opacity === '1';
    });
    await shot(t, browser, 'map-1280');

    const offOrigin = requests.filter((u) => !u.startsWith(`${origin}/`));
    t.deepEqual(offOrigin, [], `no tile URL: ${requests.length} requests, none outside ${origin}`);
    t.ok(requests.includes(`${origin}/assets/leaflet/leaflet.js`) && requests.includes(`${origin}/map/rigs.json`), 'Leaflet and the markers come from rigd');
    t.ok((await page.locator('path.graticule-line').count()) > 2, 'a graticule is drawn instead of tiles');
    t.equal(await page.locator('.leaflet-control-scale').count(), 1, 'a scale');

    await popup.locator('a').click();
    await page.waitForURL('**/rigs/evil');
    t.equal(await page.locator('h1 b').textContent(), 'evil', 'the link leads to the rig page');
    t.deepEqual(browser.pageErrors, [], 'no page errors');
  }, inViewer());
});

test('a first load of the markers that fails is tried again soon, not a whole refresh interval later', async (t) => {
  await withPage(async (page) => {
    let asked = 0;
    // The first GET of the markers fails as a network error would (the page asks again by itself).
    await page.route('**/map/rigs.json', (route) => (++asked === 1 ? route.abort('failed') : route.continue()));
    // A refresh interval of 10 minutes: only the page's own retry can draw the markers within the wait.
    await page.goto(`${vpnOrigin(port)}/map?refresh=600`);
    await loaded(page);
    t.ok(asked >= 2, `the markers were asked for again (${asked} requests)`);
    t.equal(await page.evaluate(() => (globalThis as unknown as MapWindow).rigdMap.state.rigs), 5, 'and drawn: the five rigs with a fix');
  }, inViewer());
});

test('/map at 420 px: markers and clusters together still count every rig with a fix', async (t) => {
  await withPage(
    async (page, browser) => {
      await page.goto(`${vpnOrigin(port)}/map`);
      await loaded(page);
      const drawn = await drawnRigs(page);
      t.equal(drawn.markers + drawn.inClusters, 5, `markers ${drawn.markers} + rigs in ${drawn.clusters} clusters = 5`);
      const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
      t.ok(width <= 420, `no sideways scrolling: scrollWidth ${width}`);
      await shot(t, browser, 'map-420');
      // Zoomed out to the whole world, the four gather into clusters that still count them all.
      await page.evaluate(() => (globalThis as unknown as MapWindow).rigdMap.map.setZoom(2, { animate: false }));
      await page.locator('.leaflet-marker-icon.marker-cluster').first().waitFor();
      // The markers of the old zoom leave the DOM once the cluster layer has redrawn.
      const settled = await page
        .waitForFunction(() => {
          const d = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document;
          return d.querySelectorAll('.leaflet-marker-icon.rig-marker').length + d.querySelectorAll('.leaflet-marker-icon.marker-cluster').length <= 3;
        }, undefined, { timeout: 60_000 })
        .then(() => true, () => false);
      t.ok(settled, 'fewer icons than rigs once clustered');
      const out = await drawnRigs(page);
      t.ok(out.clusters >= 1, `zoomed out: ${out.clusters} cluster(s)`);
      t.equal(out.markers + out.inClusters, 5, `markers ${out.markers} + rigs in clusters ${out.inClusters} = 5`);
      t.deepEqual(browser.pageErrors, [], 'no page errors');
    },
    inViewer({ width: 420, height: 800 }),
  );
});

test('the reload every N seconds keeps the operator’s pan and zoom and adds a new rig', async (t) => {
  await withPage(async (page, browser) => {
    await page.goto(`${vpnOrigin(port)}/map?refresh=1`);
    await loaded(page);
    // Pan south, to a part of the map with no marker near its centre.
    await page.evaluate(() => (globalThis as unknown as MapWindow).rigdMap.map.panBy([0, 250], { animate: false }));
    const before = await page.evaluate(() => {
      const m = (globalThis as unknown as MapWindow).rigdMap.map;
      return { center: m.getCenter(), zoom: m.getZoom() };
    });
    const nearest = await page.evaluate(
      ([fixes]) => {
        const m = (globalThis as unknown as MapWindow).rigdMap.map;
        const size = m.getSize();
        return Math.min(...fixes.map((f) => Math.hypot(m.latLngToContainerPoint(f).x - size.x / 2, m.latLngToContainerPoint(f).y - size.y / 2)));
      },
      [[[52.52, 13.405], [48, 2], [40, -4], [44, 8]] as [number, number][]],
    );
    t.ok(nearest > 100, `the view's centre is ${Math.round(nearest)} px from the nearest rig (a new rig there draws alone)`);
    const r = await report('newcomer', '10.144.190.7', { rig_serial: 'SNEW', software_version: '1.0', git_branch: 'main', gpsd_latitude: before.center.lat.toFixed(5), gpsd_longitude: before.center.lng.toFixed(5) });
    t.equal(r.status, 200, 'a new rig reports at the centre of the view');
    const loads = await page.evaluate(() => (globalThis as unknown as MapWindow).rigdMap.state.loads);
    await page.waitForFunction((n) => (globalThis as unknown as MapWindow).rigdMap.state.loads >= n + 2, loads, { timeout: 60_000 });
    await page.locator('.leaflet-marker-icon[title="newcomer"]').waitFor({ timeout: 60_000 });
    t.pass('the new rig’s marker appeared');
    const after = await page.evaluate(() => {
      const m = (globalThis as unknown as MapWindow).rigdMap.map;
      return { center: m.getCenter(), zoom: m.getZoom() };
    });
    t.deepEqual(after, before, 'centre and zoom unchanged after the reloads');
    t.equal(await page.locator('.map-count').textContent(), '(6 rigs)', 'count updated');
    t.deepEqual(browser.pageErrors, [], 'no page errors');
  }, inViewer());
});

test('with page.map_tiles_url set, the tiles come from it (and nothing else leaves rigd)', async (t) => {
  await withPage(async (page) => {
    const requests = recordRequests(page);
    const origin = vpnOrigin(Number(tiled.server.info.port));
    const tileOrigin = `http://${GW}:${(tiles.address() as AddressInfo).port}`;
    await page.goto(`${origin}/map`);
    await loaded(page);
    await page.locator('img.leaflet-tile-loaded').first().waitFor({ timeout: 60_000 });
    t.ok(tilePaths.length > 0, `${tilePaths.length} tile requests reached the tile server`);
    t.ok(tilePaths.every((p) => /^\/\d+\/\d+\/\d+\.png$/.test(p)), `as /{z}/{x}/{y}.png (${tilePaths[0]})`);
    t.deepEqual(requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith(`${tileOrigin}/`)), [], 'no other request leaves rigd');
    t.equal(await page.locator('path.graticule-line').count(), 0, 'no graticule over tiles');
    t.equal(await page.locator('.leaflet-marker-icon.rig-marker').count(), 1, 'the rig is drawn');
  }, inViewer());
});

test('the rig page shows its track of the last 24 hours; a rig without a fix has no map', async (t) => {
  await withPage(async (page, browser) => {
    await page.goto(`${vpnOrigin(port)}/rigs/rig-a`);
    await page.waitForFunction(() => (globalThis as unknown as MapWindow).rigdTrack !== undefined);
    t.equal(await page.evaluate(() => (globalThis as unknown as MapWindow).rigdTrack!.points), 3, 'three positions (the fix of two days ago left out)');
    const d = await page.locator('#track path.rig-track').getAttribute('d');
    t.equal((d ?? '').match(/[ML]/g)?.length, 3, `one polyline through three points (${d})`);
    t.equal(await page.locator('#track .leaflet-marker-icon.dot-online').count(), 1, 'the current position as a marker, coloured by status');
    t.equal(await page.locator('script:not([src])').count(), 0, 'no inline script');
    await shot(t, browser, 'rig-track-1280');
    await page.goto(`${vpnOrigin(port)}/rigs/nofix`);
    t.deepEqual([await page.locator('#track').count(), await page.locator('script').count()], [0, 0], 'no fix: no map, no script');
    t.deepEqual(browser.pageErrors, [], 'no page errors');
  }, inViewer());
});

test('GET /map/rigs.json: small fields; /map, its JSON and the map library refused outside the VPN', async (t) => {
  const res = await http(`http://127.0.0.1:${port}/map/rigs.json`);
  t.deepEqual([res.status, res.headers['content-type']], [200, 'application/json; charset=utf-8'], '200 JSON on loopback');
  const body = (JSON.parse(res.text) as { data: { rigs: Record<string, unknown>[] } }).data;
  t.deepEqual(body.rigs.map((r) => r.id).sort(), ['evil', 'lostfix', 'newcomer', 'rig-a', 'rig-b', 'rig-c'], 'the rigs with a fix, or a last known one');
  const lost = body.rigs.find((r) => r.id === 'lostfix') as Record<string, unknown> | undefined;
  t.deepEqual([lost?.lat, lost?.lon], [60, 25], 'lostfix: at its last fix');
  t.ok(Date.now() - new Date(String(lost?.last_fix)).getTime() > 3600_000, 'with the time of that fix (last_fix), two hours ago');
  t.deepEqual(Object.keys(body.rigs[0]!).sort(), ['branch', 'id', 'last_report', 'lat', 'lon', 'status', 'version'], 'fields');
  const again = await http(`http://127.0.0.1:${port}/map/rigs.json`, { headers: { 'if-none-match': String(res.headers.etag) } });
  t.equal(again.status, 304, 'unchanged: 304 to the ETag the page revalidates with');
  const a = body.rigs.find((r) => r.id === 'rig-a')!;
  t.deepEqual([a.lat, a.lon, a.status], [52.52, 13.405, 'online'], 'rig-a: its current fix and status');
  const fromVpn = await net.request('viewer', { url: `http://10.144.190.1:${port}/map`, headers: { host: VPN_HOST } });
  t.equal(fromVpn.status, 200, 'a VPN client gets the page');
  for (const path of ['/map', '/map/rigs.json', '/assets/leaflet/leaflet.js', '/assets/leaflet.markercluster/leaflet.markercluster.js', '/assets/map.js']) {
    const outside = await net.request('outside', { url: `http://10.145.190.1:${port}${path}`, headers: { host: VPN_HOST } });
    t.equal(outside.status, 403, `outside the VPN: ${path} 403`);
  }
  t.equal((await http(`http://127.0.0.1:${port}/map`, { headers: { host: 'attacker.example' } })).status, 403, 'a foreign Host name: 403');
  const lib = await http(`http://127.0.0.1:${port}/assets/leaflet/leaflet.js`);
  t.deepEqual([lib.status, /javascript/.test(String(lib.headers['content-type']))], [200, true], 'Leaflet served by rigd');
  t.equal((await http(`http://127.0.0.1:${port}/assets/leaflet/../../package.json`)).status, 404, 'nothing outside the library folder');
});

test('teardown', async (t) => {
  await closeServer(t, s);
  await tiled.close();
  await new Promise<void>((resolve) => tiles.close(() => resolve()));
  await net.destroy();
});
