// Combining marks stacked on one letter (a "zalgo" branch: each mark drawn above the last) in
// headless Chromium: the rig's text stays inside its own cell and never paints over another rig's
// row on the rig list, nor over the other fields of its rig page or its map popup. Compared by pixels: the
// neighbouring row (field) with the hostile text shown and with it hidden must be the same image.
import test from 'tape';
import type { Page } from 'playwright-core';
import { inNamespace, vpnOrigin, withPage } from '../helpers/browser.ts';
import { closeServer } from '../helpers/closed.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { reportFrom } from '../helpers/rig-reports.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const GW = '10.144.203.1';
/** 127 combining marks (acute, grave, tilde, ring above in turn) on one letter: within the report's 128 characters. */
const ZALGO = `a${Array.from({ length: 127 }, (_, i) => ['\u0301', '\u0300', '\u0303', '\u030a'][i % 4]).join('')}`;
const BELOW = `a${'\u0323'.repeat(127)}`;
let net: Hosts;
let s: TestServer;
let port = 0;

test('setup: a plain rig, a rig whose branch stacks marks above and one whose version stacks them below', async (t) => {
  net = await createHosts([{ name: 'viewer', addr: '10.144.203.2', gw: GW, extraAddrs: ['10.144.203.3', '10.144.203.4'] }]);
  s = await startServer({}, { host: '::' });
  port = Number(s.server.info.port);
  const report = (id: string, from: string, f: Record<string, string>) => reportFrom(net, 'viewer', `http://${GW}:${port}`, id, f, from);
  const res = await Promise.all([
    report('rig-a', '10.144.203.2', { rig_serial: 'SA', software_version: '1.0', git_branch: 'main' }),
    report('rig-b', '10.144.203.3', { rig_serial: 'SB', software_version: '1.0', git_branch: ZALGO, gpsd_latitude: '40', gpsd_longitude: '10' }),
    report('rig-c', '10.144.203.4', { rig_serial: 'SC', software_version: BELOW, git_branch: 'main' }),
  ]);
  t.deepEqual(res.map((r) => [r.status, r.body]), [[200, 'Ok'], [200, 'Ok'], [200, 'Ok']], 'the three reports accepted');
});

/** Screenshots of `target` with the text of `hostile` shown, then hidden: equal when nothing of it paints over `target`. */
async function overdrawn(page: Page, target: string, hostile: string): Promise<boolean> {
  const shown = await page.locator(target).screenshot();
  await page.locator(hostile).evaluate((el) => ((el as unknown as { style: { visibility: string } }).style.visibility = 'hidden'));
  const hidden = await page.locator(target).screenshot();
  await page.locator(hostile).evaluate((el) => ((el as unknown as { style: { visibility: string } }).style.visibility = ''));
  return !shown.equals(hidden);
}

test('the rig list: the stacked marks stay in their cell; the rows above and below are untouched', async (t) => {
  await withPage(async (page) => {
    await page.goto(`${vpnOrigin(port)}/rigs`);
    const row = (id: string) => `table.rigs tbody tr:has(a[href="/rigs/${id}"])`;
    t.notOk(await overdrawn(page, row('rig-a'), `${row('rig-b')} td.branch`), 'rig-a\'s row: nothing of rig-b\'s branch painted over it');
    t.notOk(await overdrawn(page, row('rig-b'), `${row('rig-c')} td.branch`), 'rig-b\'s row: nothing of rig-c\'s version painted over it');
    t.notOk(await overdrawn(page, 'h1', `${row('rig-b')} td.branch`), 'the heading: untouched');
  }, inNamespace(net.host('viewer').ns, GW));
});

test('a rig page: the stacked marks stay in their field', async (t) => {
  await withPage(async (page) => {
    await page.goto(`${vpnOrigin(port)}/rigs/rig-b`);
    t.notOk(await overdrawn(page, 'dd.serial', 'dd.branch'), 'the serial above: untouched');
    await page.goto(`${vpnOrigin(port)}/rigs/rig-c`);
    t.notOk(await overdrawn(page, 'dd.vpn', 'dd.branch'), 'the VPN address below: untouched');
  }, inNamespace(net.host('viewer').ns, GW));
});

test('the map: the stacked marks stay in the popup\'s branch line; the rig id above is untouched', async (t) => {
  await withPage(async (page) => {
    await page.goto(`${vpnOrigin(port)}/map`);
    await page.locator('.leaflet-marker-icon').first().click();
    await page.locator('.rig-popup .branch').waitFor();
    // Leaflet fades the popup in: compare only once it is fully shown.
    await page.waitForFunction(() => {
      const w = globalThis as unknown as { document: { querySelector(s: string): unknown }; getComputedStyle(e: unknown): { opacity: string } };
      const popup = w.document.querySelector('.leaflet-popup');
      return popup !== null && w.getComputedStyle(popup).opacity === '1';
    });
    t.notOk(await overdrawn(page, '.rig-popup > div:first-child', '.rig-popup .branch'), 'the popup\'s id line: untouched');
  }, inNamespace(net.host('viewer').ns, GW));
});

test('teardown', async (t) => {
  await closeServer(t, s);
  await net.destroy();
});
