// /rigs and /rigs/{id} in headless Chromium at 1280 and 420 px, browsed from a VPN address (the
// browser runs in a network namespace). Counts, links to each rig's page, titles with ISO 8601
// times, no sideways scrolling on a phone, hostile rig text escaped. Screenshots in test-output/:
// rigs-page-1280.png, rigs-page-420.png, rig-page-1280.png, rig-page-420.png.
import test from 'tape';
import { existsSync, statSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { withPage, type OpenBrowser } from '../helpers/browser.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
const XSS_IMG = '<img src=x onerror="window.__pwned=1">';
const XSS_BRANCH = '<script>window.__pwned=2</script>';
/** 128 characters without a break opportunity: must wrap, not widen the page. */
const LONG_VERSION = `v${'9'.repeat(127)}`;
/** ISO 8601 UTC ending in Z: the times of the rig detail (its JSON and its page's title attributes). */
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let net: Hosts;
let s: TestServer;
let port = 0;
let token = '';

test('setup: five rigs report from the VPN (one hostile); two are made stale and offline; the hostile one has an upload and a capture', async (t) => {
  net = await createHosts([
    { name: 'viewer', addr: '10.144.170.2', gw: '10.144.170.1', extraAddrs: ['10.144.170.3', '10.144.170.4', '10.144.170.5', '10.144.170.6'] },
    { name: 'outside', addr: '10.145.170.2', gw: '10.145.170.1' },
  ]);
  s = await startServer({}, { host: '::' });
  port = Number(s.server.info.port);
  token = (await userWithToken(s, 'ops')).token;
  const report = (id: string, from: string, f: Record<string, string>) =>
    net.request('viewer', {
      url: `http://10.144.170.1:${port}/api/v1/rigs/${id}`,
      method: 'PUT',
      headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(f).toString(),
      localAddress: from,
    });
  const res = await Promise.all([
    report('rig10', '10.144.170.2', { rig_serial: 'S10', local_ip: '192.168.170.10', software_version: '3.1.0', git_branch: 'main', gpsd_latitude: '52.52', gpsd_longitude: '13.405' }),
    report('rig2', '10.144.170.3', { rig_serial: 'S2', local_ip: '192.168.170.2', software_version: '3.0.9', git_branch: 'release' }),
    report('evil', '10.144.170.4', { rig_serial: `S"${XSS_IMG}`, local_ip: 'fd00::7', software_version: `</td>${XSS_IMG}`, git_branch: XSS_BRANCH, gpsd_latitude: '1.5', gpsd_longitude: '2.5' }),
    report('rig1', '10.144.170.5', { rig_serial: 'S1', software_version: '1.0', git_branch: 'old' }),
    report('long-one', '10.144.170.6', { rig_serial: 'S-long', local_ip: '192.168.170.99', software_version: LONG_VERSION, git_branch: `b${'x'.repeat(127)}` }),
  ]);
  t.deepEqual(res.map((r) => r.status), [200, 200, 200, 200, 200], 'five reports accepted');
  const { Upload, Capture, Job } = s.app.db.models;
  const ago = (ms: number) => new Date(Date.now() - ms);
  await setAges();
  await s.app.db.writes.run(async (transaction) => {
    await Upload.create({ rig_id: 'evil', peer_address: '10.144.170.4', key: `evil/${XSS_IMG}.sqlite`, expected_size: 10, project: null, url_expires_at: ago(-3600_000) }, { transaction });
    await Capture.create({ bucket: 'captures', key: `evil/${XSS_BRANCH}.sqlite`, etag: 'e1', size: 10, rig_id: 'evil', project: null, job_id: (await Job.create({ kind: 'capture', payload: '{}', max_attempts: 5, run_after: new Date(), state: 'failed', attempts: 1, error_code: 'not_sqlite', last_error: 'not a SQLite database' }, { transaction })).id }, { transaction });
  });
});

/**
 * rig2 reported 20 minutes ago (stale), rig1 2 hours ago (offline); with `justNow`, rig10 reported
 * just now. Set again right before a page that words them is asked for: the words round to the
 * nearest minute ("less than a minute" ends at 30 s), and a busy machine can take longer than that
 * to start the browser or to go through the pages before.
 */
async function setAges(justNow: string[] = []): Promise<void> {
  const { Rig } = s.app.db.models;
  const ago = (ms: number) => new Date(Date.now() - ms);
  await s.app.db.writes.run(async (transaction) => {
    for (const id of justNow) await Rig.update({ last_seen_at: ago(0) }, { where: { id }, transaction });
    await Rig.update({ last_seen_at: ago(20 * 60_000) }, { where: { id: 'rig2' }, transaction });
    await Rig.update({ last_seen_at: ago(2 * 3600_000 + 60_000) }, { where: { id: 'rig1' }, transaction });
  });
}

/** The part of a DOM element these checks use (the tests compile without the DOM library). */
type Attrs = { getAttribute(name: string): string | null };
const scrollWidth = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
const pwned = (page: Page) => page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned ?? null);

async function shot(t: test.Test, browser: OpenBrowser, name: string) {
  const file = await browser.screenshot(name);
  t.ok(existsSync(file) && statSync(file).size > 5000, `screenshot ${file}`);
}

test('the list at 1280 px: counts, a link per row to its page, relative times with the ISO time (offset) as title', async (t) => {
  await withPage(
    async (page, browser) => {
      await setAges();
      const res = await page.goto(`http://${VPN_HOST}:${port}/rigs`);
      t.equal(res?.status(), 200, 'list served to a VPN client');
      const count = (status: string) => page.locator(`.counts [data-status="${status}"] b`).textContent();
      t.deepEqual([await count('online'), await count('stale'), await count('offline')], ['3', '1', '1'], 'counts: 3 online, 1 stale, 1 offline');
      t.ok(await page.locator('.counts').isVisible(), 'counts shown');
      t.ok((await page.locator('.counts').boundingBox())!.y < (await page.locator('table.rigs').boundingBox())!.y, 'above the table');

      const rows = page.locator('table.rigs tbody tr');
      const ids = await rows.locator('td:nth-child(1) b').allTextContents();
      t.deepEqual(ids, ['evil', 'long-one', 'rig1', 'rig2', 'rig10'], 'natural order');
      const hrefs = await rows.locator('td:nth-child(1) b a').evaluateAll((as) => as.map((a) => (a as unknown as Attrs).getAttribute('href')));
      t.deepEqual(hrefs, ids.map((id) => `/rigs/${id}`), 'every row links to /rigs/{id}');
      for (let i = 0; i < ids.length; i++) t.equal(await rows.nth(i).locator('td').count(), 6, `row ${ids[i]}: still the six cells of the interface`);

      const times = rows.locator('td:nth-child(5) time');
      const titles = await times.evaluateAll((els) => els.map((e) => (e as unknown as Attrs).getAttribute('title')));
      t.ok(titles.length > 0 && titles.every((v) => v !== null && ISO_Z.test(v)), `every time has an ISO 8601 UTC title ending in Z (${titles[0]})`);
      t.equal(await rows.nth(3).locator('td:nth-child(5) time').textContent(), '20 minutes ago', 'relative text stays');
      const rig2At = new Date((await rows.nth(3).locator('td:nth-child(5) time').getAttribute('title'))!).getTime();
      t.ok(Math.abs(rig2At - (Date.now() - 20 * 60_000)) < 120_000, 'the title is the right moment');
      t.ok((await scrollWidth(page)) <= 1280, 'no sideways scrolling at 1280 px');
      t.equal(await pwned(page), null, 'no injected code ran');
      t.deepEqual(browser.pageErrors, [], 'no page errors');
      await shot(t, browser, 'rigs-page-1280');

      // Every link leads to a page for that rig.
      for (const id of ids) {
        const r = await page.goto(`http://${VPN_HOST}:${port}/rigs/${id}`);
        t.deepEqual([r?.status(), await page.locator('h1 b').textContent()], [200, id], `/rigs/${id}: 200, its page`);
      }
      await setAges(['rig10']);
      await page.goto(`http://${VPN_HOST}:${port}/rigs/rig10`);
      t.equal(await page.locator('meta[http-equiv="refresh"]').getAttribute('content'), '60', 'detail page refreshes every 60 s');
      t.equal(await page.locator('dd.vpn').textContent(), '10.144.170.2 (rig10.rigs.internal)', 'VPN address and name');
      t.equal(await page.locator('dd.vpn a').getAttribute('href'), 'http://rig10.rigs.internal', 'VPN name link');
      t.equal(await page.locator('dd.lan a').getAttribute('href'), 'http://192.168.170.10', 'local_ip link');
      t.equal(await page.locator('dd.branch').textContent(), 'main (3.1.0)', 'branch (version)');
      t.match((await page.locator('dd.last-report').textContent())!, /^less than a minute ago \(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00 \(UTC\)\)$/, 'last report: words and absolute time with zone');
      t.match((await page.locator('dd.last-report time').getAttribute('title'))!, ISO_Z, 'and the ISO time (UTC) as title');
      t.deepEqual(await page.locator('table.positions tbody td:first-child').allTextContents(), ['52.52000, 13.40500'], 'recent positions from the history');
      t.equal(await page.locator('script:not([src^="/assets/"])').count(), 0, 'no script but rigd\'s own files (the track map)');
      await shot(t, browser, 'rig-page-1280');
    },
    { netns: net.host('viewer').ns, hostMap: { [VPN_HOST]: '10.144.170.1' } },
  );
});

test('at 420 px: no sideways scrolling on the list or a rig page; the hostile rig page shows its text as text', async (t) => {
  await withPage(
    async (page, browser) => {
      await page.goto(`http://${VPN_HOST}:${port}/rigs`);
      t.ok(await page.locator('.counts').isVisible(), 'counts shown at 420 px');
      const width = await scrollWidth(page);
      t.ok(width <= 420, `list: document scrollWidth ${width} <= 420`);
      t.notOk(await page.locator('table.rigs td:nth-child(2)').first().isVisible(), 'lesser columns hidden (LAN IP)');
      t.ok(await page.locator('table.rigs td:nth-child(1) a').first().isVisible(), 'the link to each rig stays');
      await shot(t, browser, 'rigs-page-420');

      await page.locator('table.rigs tbody tr:first-child td:nth-child(1) a').click();
      await page.waitForURL(`**/rigs/evil`);
      t.equal(await page.locator('h1 b').textContent(), 'evil', 'followed the link to the hostile rig');
      t.equal(await page.locator('dd.branch').textContent(), `${XSS_BRANCH} (</td>${XSS_IMG})`, 'branch and version shown as text');
      t.equal(await page.locator('dd.serial').textContent(), `S"${XSS_IMG}`, 'serial as text');
      t.equal(await page.locator('dd.lan a').getAttribute('href'), 'http://[fd00::7]', 'IPv6 local_ip link');
      t.equal(await page.locator('table.uploads td.key').textContent(), `evil/${XSS_IMG}.sqlite`, 'upload key as text');
      t.equal(await page.locator('table.captures td.key').textContent(), `evil/${XSS_BRANCH}.sqlite`, 'capture key as text');
      t.equal(await page.locator('table.captures td:nth-child(2)').textContent(), 'failed (not_sqlite)', 'capture state');
      t.equal(await page.locator('img').count(), 0, 'no element injected');
      t.equal(await page.locator('script:not([src^="/assets/"])').count(), 0, 'no script injected (only rigd\'s own files, for the track map)');
      t.equal(await pwned(page), null, 'no injected code ran');
      const detailWidth = await scrollWidth(page);
      t.ok(detailWidth <= 420, `rig page: document scrollWidth ${detailWidth} <= 420`);
      await shot(t, browser, 'rig-page-420');

      await page.goto(`http://${VPN_HOST}:${port}/rigs/long-one`);
      const longWidth = await scrollWidth(page);
      t.ok(longWidth <= 420, `a 128-character version without spaces wraps: scrollWidth ${longWidth} <= 420`);
      t.deepEqual(browser.pageErrors, [], 'no page errors');
    },
    { netns: net.host('viewer').ns, hostMap: { [VPN_HOST]: '10.144.170.1' }, viewport: { width: 420, height: 900 } },
  );
});

test('rig pages: escaped in the HTML source, 404 page for an unknown id, 403 outside the VPN', async (t) => {
  const lo = await http(`http://127.0.0.1:${port}/rigs/evil`);
  t.deepEqual([lo.status, lo.headers['content-type']], [200, 'text/html; charset=utf-8'], 'loopback: 200 HTML');
  t.ok(lo.text.includes('&lt;script&gt;window.__pwned&#x3D;2&lt;/script&gt;'), 'escaped in the source');
  t.notOk(lo.text.includes(XSS_BRANCH) || lo.text.includes(XSS_IMG), 'no raw markup from the rig');
  for (const path of ['/rigs/nope', '/rigs/%3Cscript%3Ealert(1)%3C%2Fscript%3E', '/rigs/-bad-']) {
    const res = await http(`http://127.0.0.1:${port}${path}`);
    t.deepEqual([res.status, res.headers['content-type']], [404, 'text/html; charset=utf-8'], `${path}: 404 page`);
    t.notOk(res.text.includes('<script'), `${path}: nothing of the path as markup`);
  }
  t.match((await http(`http://127.0.0.1:${port}/rigs/nope`)).text, /Rig nope not found\./, 'the 404 page says which rig');
  const outside = await net.request('outside', { url: `http://10.145.170.1:${port}/rigs/rig10`, headers: { host: VPN_HOST } });
  t.deepEqual([outside.status, outside.headers['content-type']], [403, 'text/html; charset=UTF-8'], 'outside the VPN: 403');
  const rebound = await http(`http://127.0.0.1:${port}/rigs/rig10`, { headers: { host: 'attacker.example' } });
  t.equal(rebound.status, 403, 'a foreign Host name (DNS rebinding): 403');
});

test('GET /api/v1/rigs/{id}: the same detail as JSON, token and VPN rule; /api/v1/rigs/upload is still the upload request', async (t) => {
  const get = (path: string, auth = true) =>
    net.request('viewer', { url: `http://10.144.170.1:${port}${path}`, headers: { host: VPN_HOST, ...(auth ? { authorization: token } : {}) } });
  const res = await get('/api/v1/rigs/EVIL');
  t.equal(res.status, 200, '200 from the VPN with a token');
  const body = JSON.parse(res.body);
  t.equal(body.success, true, 'success');
  const rig = body.data.rig;
  t.deepEqual([rig.id, rig.branch, rig.lan_ip, rig.uploads.total, rig.captures.total], ['evil', XSS_BRANCH, 'fd00::7', 1, 1], 'the detail');
  t.match(rig.last_report.at, ISO_Z, 'last report ISO 8601 UTC with Z');
  t.deepEqual(rig.positions.map((p: { latitude: number }) => p.latitude), [1.5], 'positions');
  const missing = await get('/api/v1/rigs/nope');
  t.deepEqual([missing.status, JSON.parse(missing.body).error.code, JSON.parse(missing.body).error.message], [404, 'rig_not_found', 'rig nope not found'], 'unknown: 404 JSON');
  t.equal((await get('/api/v1/rigs/evil', false)).status, 401, 'no token: 401');
  const lo = await http(`http://127.0.0.1:${port}/api/v1/rigs/evil`, { headers: { authorization: token } });
  t.equal(lo.status, 403, 'loopback: 403 (the rig VPN rule of everything under /api/v1/rigs)');
  const upload = await get('/api/v1/rigs/upload?key=a.sqlite');
  t.equal(upload.status, 400, 'GET /api/v1/rigs/upload without size: still the upload request (400), not a rig lookup');
  t.notOk(upload.body.includes('rig_not_found'), 'not "rig upload not found"');
});

test('teardown', async (t) => {
  await closeServer(t, s);
  await net.destroy();
});
