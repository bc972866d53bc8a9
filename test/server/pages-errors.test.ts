// The pages people open, in headless Chromium at 1280 and 420 px: the header band of /rigs spans
// all six columns; a 404 (unknown rig, unknown path) names what is missing and links back to
// /rigs; the 403 page names the client address when that is what is refused (a browser in a
// network namespace outside page.allow), the Host when the Host is, and links back; a rig
// endpoint's 403 has no such link. Screenshots in test-output/pages-*.png. Chromium runs in a
// namespace (the operator's, or the visitor's): in the root namespace, every namespace another test
// file adds or removes meanwhile is a network change to it, which cancels the page's loads.
import test from 'tape';
import { existsSync, statSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { withPage, type OpenBrowser } from '../helpers/browser.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
let net: Hosts;
let s: TestServer;
let port = 0;

/** Chromium in the operator's namespace (inside page.allow), resolving the VPN name (or `host`) to rigd there. */
const asOperator = (width: number, host = VPN_HOST) => ({ viewport: { width, height: 600 }, netns: net.host('operator').ns, hostMap: { [host]: '10.144.106.1' } });

test('setup: a server whose pages are for 10.144.106.0/24 and loopback; a visitor at 10.144.105.2', async (t) => {
  net = await createHosts([
    { name: 'visitor', addr: '10.144.105.2', gw: '10.144.105.1' },
    { name: 'operator', addr: '10.144.106.2', gw: '10.144.106.1' },
  ]);
  s = await startServer({ page: { allow: ['127.0.0.0/8', '::1/128', '10.144.106.0/24'] } }, { host: '::' });
  port = Number(s.server.info.port);
  await s.app.db.writes.run(async (transaction) => {
    await s.app.db.models.Rig.create(
      { id: 'rig1', serial: 'S1', lan_ip: '192.168.1.20', vpn_address: '10.144.105.9', version: '1.0', branch: 'feature/a-branch-name-long-enough-to-wrap', latitude: null, longitude: null, last_seen_at: new Date(), current_project: null },
      { transaction },
    );
  });
  t.equal(await s.app.db.models.Rig.count(), 1, 'one rig');
});

async function shot(t: test.Test, browser: OpenBrowser, name: string) {
  const file = await browser.screenshot(name);
  t.ok(existsSync(file) && statSync(file).size > 2000, `screenshot ${file}`);
}

/** Follows the page's link back and checks it lands on the rig list. */
async function followBack(t: test.Test, page: Page) {
  const back = page.locator('a[href="/rigs"]');
  t.equal(await back.count(), 1, 'one link back to /rigs');
  await back.click();
  await page.waitForURL('**/rigs');
  t.equal(await page.locator('h1').textContent(), 'Rigs', 'the link leads to the rig list');
}

for (const width of [1280, 420]) {
  test(`/rigs at ${width} px: the header band spans every column`, async (t) => {
    await withPage(
      async (page, browser) => {
        await page.goto(`http://${VPN_HOST}:${port}/rigs`);
        t.deepEqual(await page.locator('table.rigs thead th').allTextContents(), ['ID', 'LAN IP', '', 'Branch (version)'], "the seed's four header cells");
        const row = await page.locator('table.rigs tbody tr').first().boundingBox();
        const head = await page.locator('table.rigs thead tr').boundingBox();
        const lastTh = await page.locator('table.rigs thead th').last().boundingBox();
        t.ok(row && head && lastTh, 'header and row drawn');
        t.ok(Math.abs(lastTh!.x + lastTh!.width - (row!.x + row!.width)) < 1, `the band ends where the rows end (${Math.round(lastTh!.x + lastTh!.width)} px, rows ${Math.round(row!.x + row!.width)} px)`);
        const cells = await page.locator('table.rigs tbody tr').first().locator('td').all();
        const visible = (await Promise.all(cells.map((c) => c.boundingBox()))).filter((b) => b && b.width > 0);
        const right = Math.max(...visible.map((b) => b!.x + b!.width));
        t.ok(lastTh!.x + lastTh!.width >= right - 1, 'no visible cell lies beyond the band');
        await shot(t, browser, `pages-rigs-${width}`);
        t.deepEqual(browser.pageErrors, [], 'no page errors');
      },
      asOperator(width),
    );
  });

  test(`404 pages at ${width} px: an unknown rig and an unknown path name what is missing and link back`, async (t) => {
    await withPage(
      async (page, browser) => {
        const res = await page.goto(`http://${VPN_HOST}:${port}/rigs/nosuch`);
        t.equal(res?.status(), 404, 'unknown rig: 404');
        t.equal(await page.locator('h1').textContent(), 'Not found: /rigs/nosuch', 'the heading names the page');
        t.equal(await page.locator('p.reason').textContent(), 'Rig nosuch not found.', 'and what is missing');
        await shot(t, browser, `pages-404-rig-${width}`);
        await followBack(t, page);
        const lost = await page.goto(`http://${VPN_HOST}:${port}/no/such/page`);
        t.equal(lost?.status(), 404, 'unknown path: 404');
        t.match(String(lost?.headers()['content-type']), /^text\/html/, 'an HTML page for the browser');
        t.equal(await page.locator('p.reason').textContent(), 'There is no page at /no/such/page.', 'names the path');
        await followBack(t, page);
        const asset = await page.goto(`http://${VPN_HOST}:${port}/assets/leaflet/nothing.js`);
        t.equal(asset?.status(), 404, 'unknown asset: 404');
        t.equal(await page.locator('p.reason').textContent(), 'There is no page at /assets/leaflet/nothing.js.', 'names the path');
        t.equal(await page.locator('a[href="/rigs"]').count(), 1, 'and links back');
        t.deepEqual(browser.pageErrors.filter((e) => !/404/.test(e)), [], 'no page errors besides the 404s');
      },
      asOperator(width),
    );
  });

  test(`403 pages at ${width} px: the client address is blamed when it is refused, the Host when it is`, async (t) => {
    await withPage(
      async (page, browser) => {
        const res = await page.goto(`http://10.144.105.1:${port}/rigs`);
        t.equal(res?.status(), 403, 'a client outside page.allow: 403');
        t.equal(await page.locator('h1').textContent(), 'Blocked client: 10.144.105.2', 'the heading names the client address, not the Host');
        t.equal(await page.locator('p.reason').textContent(), 'The client address is outside 10.144.106.0/24 or loopback.', 'and says why');
        t.equal(await page.locator('a[href="/rigs"]').count(), 1, 'a link back to /rigs');
        t.equal(await page.title(), 'Blocked client', 'the title too');
        await shot(t, browser, `pages-403-client-${width}`);
        t.deepEqual(browser.pageErrors.filter((e) => !/403/.test(e)), [], 'no page errors besides the 403');
      },
      { viewport: { width, height: 600 }, netns: net.host('visitor').ns },
    );
    await withPage(
      async (page) => {
        const res = await page.goto(`http://evil.example:${port}/map`);
        t.equal(res?.status(), 403, 'a foreign Host name from the operator (inside page.allow): 403');
        t.equal(await page.locator('h1').textContent(), `Blocked host: evil.example:${port}`, 'the heading names the Host');
        t.equal(await page.locator('p.reason').textContent(), 'The Host header is not allowed here.', 'and says why');
        t.equal(await page.locator('a[href="/rigs"]').count(), 1, 'a link back to /rigs');
      },
      asOperator(width, 'evil.example'),
    );
  });
}

test('without a browser: JSON 404 for an API client; the operator in page.allow gets the pages; a rig endpoint refusal has no page link', async (t) => {
  const api = await http(`http://127.0.0.1:${port}/no/such/page`);
  t.equal(api.status, 404, '404');
  t.match(String(api.headers['content-type']), /^application\/json/, 'JSON when the client does not ask for HTML');
  t.equal(JSON.parse(api.text).error.code, 'not_found', 'code not_found');
  const op = await net.request('operator', { url: `http://10.144.106.1:${port}/rigs`, headers: { host: VPN_HOST } });
  t.equal(op.status, 200, 'the operator network: /rigs 200');
  const rig = await net.request('operator', {
    url: `http://10.144.106.1:${port}/api/v1/rigs/rig2`,
    method: 'PUT',
    headers: { host: 'evil.example', 'content-type': 'application/x-www-form-urlencoded' },
    body: 'rig_serial=S2',
  });
  t.equal(rig.status, 403, 'a rig endpoint with a foreign Host: 403');
  t.ok(rig.body.includes('<h1>Blocked host: evil.example</h1>'), "the seed's heading");
  t.notOk(rig.body.includes('href="/rigs"'), 'no link to the pages on a rig endpoint');
  t.equal(await s.app.db.models.Rig.count(), 1, 'nothing stored by the refused report');
});

test('teardown', async () => {
  await s.close();
  await net.destroy();
});
