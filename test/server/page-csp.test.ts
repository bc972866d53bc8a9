// The Content-Security-Policy of the pages, with a hostile rig reporting from the VPN: every HTML
// answer (the list, a rig page, the map, the login page, an error page) carries it, JSON answers do
// not; rigd's own pages work under it in Chromium (no violation, the map draws its markers), and
// script put into a page the way a missed escape would (an inline <script>, an onerror attribute,
// a javascript: link) does not run.
import test from 'tape';
import type { Page } from 'playwright-core';
import { inNamespace, vpnOrigin, withPage } from '../helpers/browser.ts';
import { closeServer } from '../helpers/closed.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { reportFrom } from '../helpers/rig-reports.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { contentSecurityPolicy, tileImageSource } from '../../src/server/content-security-policy.ts';

const GW = '10.144.202.1';
const XSS = '<img src=x onerror="window.__pwned=1">';
let net: Hosts;
let s: TestServer;
let port = 0;

test('setup: a hostile rig and a plain one report from the VPN', async (t) => {
  net = await createHosts([{ name: 'viewer', addr: '10.144.202.2', gw: GW, extraAddrs: ['10.144.202.3'] }]);
  s = await startServer({}, { host: '::' });
  port = Number(s.server.info.port);
  const report = (id: string, from: string, f: Record<string, string>) => reportFrom(net, 'viewer', `http://${GW}:${port}`, id, f, from);
  const res = await Promise.all([
    report('evil', '10.144.202.2', { rig_serial: `"${XSS}`, software_version: `javascript:window.__pwned=3`, git_branch: `<script>window.__pwned=2</script>`, gpsd_latitude: '10', gpsd_longitude: '20' }),
    report('rig1', '10.144.202.3', { rig_serial: 'S1', software_version: '1.0', git_branch: 'main', gpsd_latitude: '-30', gpsd_longitude: '-60' }),
  ]);
  t.deepEqual(res.map((r) => r.status), [200, 200], 'both reports accepted');
});

test('every HTML answer carries the policy; JSON answers do not', async (t) => {
  const policy = contentSecurityPolicy('');
  for (const p of ['/rigs', '/rigs/evil', '/map', '/login', '/rigs/nosuch', '/nowhere']) {
    const res = await http(`${s.url}${p}`, { headers: { accept: 'text/html' } });
    t.match(String(res.headers['content-type']), /^text\/html/, `${p}: an HTML page (${res.status})`);
    t.equal(res.headers['content-security-policy'], policy, `${p}: the policy`);
  }
  for (const directive of ["script-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'self'", "form-action 'self'"]) {
    t.ok(policy.split('; ').includes(directive), `the policy holds ${directive}`);
  }
  t.notOk(/script-src[^;]*'unsafe-(inline|eval)'/.test(policy), 'no inline script, no eval');
  const json = await http(`${s.url}/healthz`);
  t.equal(json.headers['content-security-policy'], undefined, 'a JSON answer: none (its header set is the interface\'s)');
});

test('the tile server of page.map_tiles_url is an image source; a {s} subdomain a wildcard', (t) => {
  t.equal(tileImageSource(''), null, 'none configured: none');
  t.equal(tileImageSource('https://tiles.example:8443/{z}/{x}/{y}.png'), 'https://tiles.example:8443', 'scheme, host and port');
  t.equal(tileImageSource('http://{s}.tile.lan/{z}/{x}/{y}.png'), 'http://*.tile.lan', '{s}. as *.');
  t.equal(tileImageSource('https://t{s}.tile.lan/{z}/{x}/{y}.png'), 'https:', '{s} inside a label: the scheme');
  t.ok(contentSecurityPolicy('http://10.0.0.5:8080/{z}/{x}/{y}.png').includes("img-src 'self' data: http://10.0.0.5:8080;"), 'in img-src');
  t.end();
});

/** Violations the page reported, collected from the start of each document (an init script is not subject to the policy). */
async function watchViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = globalThis as unknown as { __violations: string[]; document: { addEventListener(n: string, f: (e: { violatedDirective: string; blockedURI: string }) => void): void } };
    w.__violations = [];
    w.document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}
const violations = (page: Page) => page.evaluate(() => (globalThis as unknown as { __violations: string[] }).__violations);
const pwned = (page: Page) => page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned ?? null);

test('in Chromium: rigd\'s pages run under the policy without a violation; the map draws both rigs', async (t) => {
  await withPage(async (page, browser) => {
    await watchViolations(page);
    for (const p of ['/rigs', '/rigs/evil', '/rigs/rig1', '/login', '/rigs/nosuch']) {
      await page.goto(`${vpnOrigin(port)}${p}`);
      await page.waitForLoadState('load');
      t.deepEqual(await violations(page), [], `${p}: no violation`);
    }
    await page.goto(`${vpnOrigin(port)}/map`);
    await page.locator('.leaflet-marker-icon').nth(1).waitFor();
    t.equal(await page.locator('.leaflet-marker-icon').count(), 2, 'the map: both markers');
    t.deepEqual(await violations(page), [], '/map: no violation');
    t.equal(await pwned(page), null, 'no rig text ran');
    // The 404 pages asked for above are logged as failed loads; anything else is an error.
    t.deepEqual(browser.pageErrors.filter((e) => !/status of 404/.test(e)), [], 'no page errors');
  }, inNamespace(net.host('viewer').ns, GW));
});

test('in Chromium: script put into the rig list as a missed escape would put it does not run', async (t) => {
  await withPage(async (page) => {
    await watchViolations(page);
    await page.goto(`${vpnOrigin(port)}/rigs`);
    // What a template without escaping would have made of the rig's text.
    await page.evaluate((xss) => {
      const d = (globalThis as unknown as { document: any }).document; // eslint-disable-line @typescript-eslint/no-explicit-any
      const cell = d.querySelector('td.branch');
      cell.innerHTML = `${xss}<a id="js" href="javascript:window.__pwned=3">v</a>`;
      const script = d.createElement('script');
      script.textContent = 'window.__pwned = 2';
      d.body.appendChild(script);
    }, XSS);
    await page.locator('#js').click();
    await page.waitForFunction(() => (globalThis as unknown as { __violations: string[] }).__violations.length >= 3);
    t.equal(await pwned(page), null, 'neither the inline script, the onerror attribute nor the javascript: link ran');
    const seen = (await violations(page)).join('\n');
    t.match(seen, /script-src/, `refused by script-src:\n${seen}`);
  }, inNamespace(net.host('viewer').ns, GW));
});

test('teardown', async (t) => {
  await closeServer(t, s);
  await net.destroy();
});
