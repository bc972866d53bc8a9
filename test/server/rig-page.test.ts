// GET /rigs in headless Chromium, browsed from a VPN address (the browser runs in a network
// namespace and resolves vpn.rigs.internal to the gateway). Screenshot: test-output/rigs-page.png.
import test from 'tape';
import { existsSync, statSync } from 'node:fs';
import { withPage } from '../helpers/browser.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
const XSS = '<img src=x onerror="window.__pwned=1">';
let net: Hosts;
let s: TestServer;
let port = 0;

test('setup: rigs report from the VPN; two are made stale and offline', async (t) => {
  net = await createHosts([
    { name: 'viewer', addr: '10.144.80.2', gw: '10.144.80.1', extraAddrs: ['10.144.80.3', '10.144.80.4', '10.144.80.5'] },
    { name: 'outside', addr: '10.145.80.2', gw: '10.145.80.1' },
  ]);
  s = await startServer({}, { host: '::' });
  port = Number(s.server.info.port);
  const report = (id: string, from: string, f: Record<string, string>) =>
    net.request('viewer', {
      url: `http://10.144.80.1:${port}/api/v1/rigs/${id}`,
      method: 'PUT',
      headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(f).toString(),
      localAddress: from,
    });
  const res = await Promise.all([
    report('rig10', '10.144.80.2', { rig_serial: 'S10', local_ip: '192.168.8.10', software_version: '3.1.0', git_branch: 'main' }),
    report('rig2', '10.144.80.3', { rig_serial: 'S2', local_ip: '192.168.8.2', software_version: '3.0.9', git_branch: 'release' }),
    report('evil', '10.144.80.4', { rig_serial: `S"${XSS}`, local_ip: 'fd00::7', software_version: `</td>${XSS}`, git_branch: `<script>window.__pwned=2</script>` }),
    report('rig1', '10.144.80.5', { rig_serial: 'S1', software_version: '1.0', git_branch: 'old' }),
  ]);
  t.deepEqual(res.map((r) => r.status), [200, 200, 200, 200], 'four reports accepted');
  await setAges();
});

/**
 * rig10 reported just now, rig2 20 minutes ago (stale), rig1 2 hours ago (offline). Set again right
 * before the page is asked for: its words round to the nearest minute ("less than a minute" ends at
 * 30 s), and a busy machine can take longer than that to start the browser after the setup.
 */
async function setAges(): Promise<void> {
  const { Rig } = s.app.db.models;
  const ago = (ms: number) => new Date(Date.now() - ms);
  await s.app.db.writes.run(async (transaction) => {
    await Rig.update({ last_seen_at: ago(0) }, { where: { id: 'rig10' }, transaction });
    await Rig.update({ last_seen_at: ago(20 * 60_000) }, { where: { id: 'rig2' }, transaction });
    await Rig.update({ last_seen_at: ago(2 * 3600_000 + 60_000) }, { where: { id: 'rig1' }, transaction });
  });
}

test('the page in Chromium: refresh, header cells, six cells per rig, links, status dots, escaping, local CSS', async (t) => {
  await withPage(
    async (page, browser) => {
      await setAges();
      const res = await page.goto(`http://${VPN_HOST}:${port}/rigs`);
      t.equal(res?.status(), 200, 'page served to a VPN client');
      t.equal(res?.headers()['content-type'], 'text/html; charset=utf-8', 'text/html; charset=utf-8');
      t.equal(await page.locator('meta[http-equiv="refresh"]').getAttribute('content'), '60', 'refresh every 60 s');
      t.deepEqual(await page.locator('table thead th').allTextContents(), ['ID', 'LAN IP', '', 'Branch (version)'], 'header cells exactly');
      const rows = page.locator('table tbody tr');
      t.deepEqual(await rows.locator('td:nth-child(1) b').allTextContents(), ['evil', 'rig1', 'rig2', 'rig10'], 'natural order: rig2 before rig10');
      for (let i = 0; i < 4; i++) t.equal(await rows.nth(i).locator('td').count(), 6, `row ${i + 1}: six cells`);

      const rig10 = rows.nth(3);
      const cells = rig10.locator('td');
      t.equal(await cells.nth(0).locator('.dot').getAttribute('title'), 'online: reported within 5 min', 'dot title says what green means');
      t.equal(await cells.nth(1).locator('a').getAttribute('href'), 'http://192.168.8.10', 'LAN IP links to http://<ip>');
      t.equal(await cells.nth(1).textContent(), '192.168.8.10', 'LAN IP text');
      t.equal(await cells.nth(2).locator('a').getAttribute('href'), 'http://rig10.rigs.internal', 'VPN name links to http://<id>.<rig_domain>');
      t.equal(await cells.nth(2).textContent(), 'rig10.rigs.internal', 'VPN name text');
      t.equal(await cells.nth(3).textContent(), 'main (3.1.0)', 'branch (version)');
      t.equal(await cells.nth(4).textContent(), 'less than a minute ago', 'time since last report in words');
      t.equal(await cells.nth(5).textContent(), '', 'last cell empty');

      t.equal(await rows.nth(2).locator('.dot').getAttribute('title'), 'stale: last report 5 min to 1 h ago', 'stale rig');
      t.equal(await rows.nth(2).locator('td').nth(4).textContent(), '20 minutes ago', '20 minutes ago');
      t.equal(await rows.nth(1).locator('.dot').getAttribute('title'), 'offline: no report for more than 1 h', 'offline rig');
      t.equal(await rows.nth(1).locator('td').nth(4).textContent(), 'about 2 hours ago', 'about 2 hours ago');
      t.equal(await rows.nth(1).locator('td').nth(1).innerHTML(), '', 'no local_ip: no link');
      const colours = await page.$$eval('table .dot', (dots) => dots.map((d) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(d).backgroundColor));
      t.deepEqual(colours, ['rgb(34, 163, 74)', 'rgb(154, 161, 171)', 'rgb(224, 161, 0)', 'rgb(34, 163, 74)'], 'green / grey / amber from the local stylesheet');
      t.deepEqual(await page.locator('.legend li').allTextContents(), [' online: reported within 5 min (a rig with a rhythm: within 1.5 of its intervals)', ' stale: last report 5 min to 1 h ago (a rig with a rhythm: late by 1.5 to 3 of its intervals)', ' offline: no report for more than 1 h (a rig with a rhythm: silent for 3 of its intervals and at least 5 min)'], 'legend');

      const evil = rows.nth(0).locator('td');
      t.equal(await evil.nth(3).textContent(), `<script>window.__pwned=2</script> (</td>${XSS})`, 'branch and version shown as text');
      t.equal(await evil.nth(0).locator('b').getAttribute('title'), `serial S"${XSS}`, 'serial stays inside its attribute');
      t.equal(await evil.nth(1).locator('a').getAttribute('href'), 'http://[fd00::7]', 'IPv6 LAN link');
      t.equal(await page.locator('img').count(), 0, 'no element injected');
      t.equal(await page.locator('tbody script').count(), 0, 'no script injected');
      t.equal(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned ?? null), null, 'no injected code ran');
      t.deepEqual(browser.pageErrors, [], 'no page errors (the stylesheet loaded)');
      const file = await browser.screenshot('rigs-page');
      t.ok(existsSync(file) && statSync(file).size > 5000, `screenshot ${file}`);
    },
    { netns: net.host('viewer').ns, hostMap: { [VPN_HOST]: '10.144.80.1' } },
  );
});

test('who may see the page: VPN and loopback, not outside', async (t) => {
  const outside = await net.request('outside', { url: `http://10.145.80.1:${port}/rigs`, headers: { host: VPN_HOST } });
  t.deepEqual([outside.status, outside.headers['content-type']], [403, 'text/html; charset=UTF-8'], 'outside: 403 HTML');
  const css = await net.request('outside', { url: `http://10.145.80.1:${port}/assets/rigs.css`, headers: { host: VPN_HOST } });
  t.equal(css.status, 403, 'outside: stylesheet 403 too');
  const lo = await http(`http://127.0.0.1:${port}/rigs`);
  t.equal(lo.status, 200, 'loopback: 200');
  t.ok(lo.text.includes('&lt;script&gt;window.__pwned&#x3D;2&lt;/script&gt;'), 'escaped in the HTML source');
  const traversal = await http(`http://127.0.0.1:${port}/assets/..%2f..%2fpackage.json`);
  t.ok([403, 404].includes(traversal.status) && !traversal.text.includes('"name": "rigd"'), `no path traversal out of public/ (${traversal.status})`);
});

test('teardown', async (t) => {
  await closeServer(t, s);
  await net.destroy();
});
