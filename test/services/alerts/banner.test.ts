// Open incidents above the rig table (/rigs) and the map (/map), in headless Chromium: a rig offline
// by its rhythm with a hostile branch shows as text (no script runs, no element is injected), the
// banner goes once the incident resolves. The browser runs in a viewer's network namespace (in the
// root one, namespaces other test files add or remove are network changes that make Chromium cancel
// the page's loads).
import test from 'tape';
import { inNamespace, vpnOrigin, withPage } from '../../helpers/browser.ts';
import { createHosts, type Hosts } from '../../helpers/netns.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const XSS_BRANCH = '<img src=x onerror="window.__pwned=1">';
let s: TestServer;
let net: Hosts;
/** rigd's address on the viewer's link. */
const GW = '10.144.192.1';
/** The pages' origin as the browser in the viewer's namespace asks for them. */
const origin = () => vpnOrigin(s.server.info.port);
/** Chromium in the viewer's namespace, resolving the VPN name to rigd there. */
const inViewer = () => inNamespace(net.host('viewer').ns, GW);

async function seed(id: string, branch: string, lastSeenMsAgo: number, everyMs: number) {
  const { Rig, RigReport } = s.app.db.models;
  const now = Date.now();
  await s.app.db.writes.run(async (transaction) => {
    await Rig.create({ id, serial: `S-${id}`, lan_ip: null, vpn_address: '10.144.40.2', version: '1.0', branch, latitude: 48.1, longitude: 11.6, last_seen_at: new Date(now - lastSeenMsAgo), current_project: null }, { transaction });
    for (let i = 0; i < 6; i++) {
      await RigReport.create({ rig_id: id, received_at: new Date(now - lastSeenMsAgo - i * everyMs), serial: `S-${id}`, lan_ip: null, peer_address: '10.144.40.2', version: '1.0', branch, latitude: 48.1, longitude: 11.6 }, { transaction });
    }
  });
}

test('setup: a rig with a hostile branch silent for 10 of its intervals, one reporting every 10 min; the sweep opens one incident', async (t) => {
  net = await createHosts([{ name: 'viewer', addr: '10.144.192.2', gw: GW }]);
  s = await startServer({ alerts: { min_silence_s: 1, outage_share: 1 } }, { host: '::' });
  await seed('munich', XSS_BRANCH, 20_000, 2000);
  // fresh reports every 10 minutes: it stays online whatever this test's pace.
  await seed('fresh', 'main', 0, 600_000);
  // rigd has been running for an hour: the rigs' silence is theirs, not rigd's absence.
  await s.app.db.writes.run((transaction) => s.app.db.models.Node.update({ started_at: new Date(Date.now() - 3_600_000) }, { where: {}, transaction }));
  await s.app.alerts.sweep();
  const rows = await s.app.db.reader.all<{ kind: string; subject: string }>('SELECT kind, subject FROM incidents WHERE resolved_at IS NULL');
  t.deepEqual(rows, [{ kind: 'rig_offline', subject: 'munich' }], 'one open rig_offline for munich');
});

for (const path of ['/rigs', '/map']) {
  test(`${path}: the open incident above the ${path === '/rigs' ? 'table' : 'map'}, its text escaped`, async (t) => {
    await withPage(async (page) => {
      const res = await page.goto(`${origin()}${path}`);
      t.equal(res?.status(), 200, 'the page');
      const banner = page.locator('section.incidents');
      t.equal(await banner.locator('h2').textContent(), '1 open incident', 'a heading with the count');
      const item = banner.locator('li.incident');
      t.equal(await item.count(), 1, 'one incident listed');
      t.equal(await item.getAttribute('data-kind'), 'rig_offline', 'its kind');
      const text = (await item.textContent()) ?? '';
      t.ok(text.includes(`version 1.0 on ${XSS_BRANCH}`), 'the hostile branch shown as text');
      t.equal(await page.locator('section.incidents img').count(), 0, 'no element injected');
      t.equal(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined, 'no script ran');
      const above = await page.evaluate(
        ([a, b]) => {
          const doc = (globalThis as unknown as { document: { querySelector(s: string): { getBoundingClientRect(): { top: number } } } }).document;
          return doc.querySelector(a!).getBoundingClientRect().top < doc.querySelector(b!).getBoundingClientRect().top;
        },
        ['section.incidents', path === '/rigs' ? 'table.rigs' : '#map'],
      );
      t.ok(above, 'above the rigs');
    }, inViewer());
  });
}

test('rigd_alerts_open{kind} on /metrics', async (t) => {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  t.match(text, /^rigd_alerts_open\{kind="rig_offline",instance="[^"]+"\} 1$/m, 'one open rig_offline');
  t.match(text, /^rigd_alerts_open\{kind="fleet_outage",instance="[^"]+"\} 0$/m, 'every kind listed, 0 when none');
});

test('resolved: no banner', async (t) => {
  await s.app.db.writes.run((transaction) => s.app.db.models.Rig.update({ last_seen_at: new Date() }, { where: { id: 'munich' }, transaction }));
  await s.app.alerts.sweep();
  const open = await s.app.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM incidents WHERE resolved_at IS NULL');
  t.equal(Number(open[0]!.n), 0, 'resolved by the sweep after its report');
  await withPage(async (page) => {
    // The page is rebuilt when the data changes or within a second (src/services/rigs/list-cache.ts).
    let left = -1;
    for (let i = 0; i < 100 && left !== 0; i++) {
      if (i > 0) await page.waitForTimeout(200);
      await page.goto(`${origin()}/rigs`);
      left = await page.locator('section.incidents').count();
    }
    t.equal(left, 0, 'the banner is gone');
  }, inViewer());
  await s.close();
  await net.destroy();
});
