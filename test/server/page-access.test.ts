// Who may look: page.allow, server.metrics_allow and server.health_allow judged from real addresses
// in network namespaces, and page.login in headless Chromium run inside a rig's namespace: the rig
// gets the login page, never the fleet; an operator logs in, sees the pages and logs out.
import test from 'tape';
import { readAudit } from '../../src/services/audit/log.ts';
import { withPage } from '../helpers/browser.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
/** In this file the VPN is 10.144.35.0/24: the operators' and the monitor's networks are outside it. */
const VPN_CIDR = '10.144.35.0/24';

let net: Hosts;
const servers: TestServer[] = [];

async function report(s: TestServer, id: string) {
  const r = await net.request('rig', {
    url: `http://10.144.35.1:${s.server.info.port}/api/v1/rigs/${id}`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ rig_serial: `S-${id}`, software_version: '1.0', git_branch: 'main', gpsd_latitude: '52.5', gpsd_longitude: '13.4' }).toString(),
  });
  if (r.status !== 200) throw new Error(`report ${id}: ${r.status} ${r.body}`);
}

test('setup: a rig, an operator and a monitor, each in its own network', async (t) => {
  net = await createHosts([
    { name: 'rig', addr: '10.144.35.2', gw: '10.144.35.1' },
    { name: 'operator', addr: '10.144.33.2', gw: '10.144.33.1' },
    { name: 'monitor', addr: '10.144.34.2', gw: '10.144.34.1' },
  ]);
  t.pass('namespaces up');
});

test('page.allow, server.metrics_allow and server.health_allow: each list lets in its clients and no one else', async (t) => {
  const s = await startServer(
    { vpn: { cidr: VPN_CIDR }, page: { allow: ['10.144.33.0/24'] }, server: { metrics_allow: ['10.144.34.2'], health_allow: ['10.144.34.0/24', '10.144.35.0/24'] } },
    { host: '::' },
  );
  servers.push(s);
  await report(s, 'rig7');
  const get = (from: string, gw: string, path: string) => net.request(from, { url: `http://${gw}:${s.server.info.port}${path}` });
  const at = { rig: '10.144.35.1', operator: '10.144.33.1', monitor: '10.144.34.1' } as const;
  for (const path of ['/rigs', '/rigs/rig7', '/map', '/map/rigs.json']) {
    const op = await get('operator', at.operator, path);
    t.equal(op.status, 200, `${path} from the operator's network (page.allow): 200`);
    const rig = await get('rig', at.rig, path);
    t.equal(rig.status, 403, `${path} from a rig on the VPN (not in page.allow): 403`);
    t.ok(rig.body.includes('Blocked client: 10.144.35.2') && rig.body.includes('This request came from <code>10.144.35.2</code>'), 'the Blocked client page, naming the client');
    t.ok(!rig.body.includes('rig7'), 'nothing of the fleet in it');
    const mon = await get('monitor', at.monitor, path);
    t.equal(mon.status, 403, `${path} from the monitor: 403`);
  }
  t.ok((await get('operator', at.operator, '/rigs')).body.includes('rig7'), 'the operator sees the fleet');
  t.ok((await get('rig', at.rig, '/rigs')).body.includes('outside <code>10.144.33.0/24</code>.'), 'the refusal says which networks may look');

  const metrics = await get('monitor', at.monitor, '/metrics');
  t.equal(metrics.status, 200, '/metrics from the monitor (server.metrics_allow): 200');
  t.match(metrics.body, /rigd_/, 'Prometheus text');
  t.equal((await get('operator', at.operator, '/metrics')).status, 403, '/metrics from the operator network: 403');
  t.equal((await get('rig', at.rig, '/metrics')).status, 403, '/metrics from a rig: 403');
  const health = await get('monitor', at.monitor, '/healthz');
  t.ok(health.status === 200 || health.status === 503, `/healthz from the monitor: answered (${health.status}), not refused`);
  t.notEqual((await get('rig', at.rig, '/healthz')).status, 403, '/healthz from a rig (in server.health_allow): answered');
  t.equal((await get('operator', at.operator, '/healthz')).status, 403, '/healthz from the operator network (not in it): 403');
  const spoofed = await net.request('rig', { url: `http://${at.rig}:${s.server.info.port}/rigs`, headers: { 'x-forwarded-for': '10.144.33.2' } });
  t.equal(spoofed.status, 403, 'X-Forwarded-For from an untrusted peer changes nothing');
});

test('page.login: a rig gets the login page, an operator logs in and out in Chromium; everything on record', async (t) => {
  const s = await startServer({ vpn: { cidr: VPN_CIDR }, page: { login: true, allow: [VPN_CIDR, '10.144.33.0/24'] } }, { host: '::' });
  servers.push(s);
  await report(s, 'rig7');
  await s.app.users.create({ username: 'ops', email: 'ops@example.com', password: 'the-right-password' });
  const port = s.server.info.port;

  const rigPage = await net.request('rig', { url: `http://10.144.35.1:${port}/rigs` });
  t.equal(rigPage.status, 302, 'a rig asking for /rigs: 302');
  t.equal(rigPage.headers.location, '/login?next=%2Frigs', 'to the login page');
  const markers = await net.request('rig', { url: `http://10.144.35.1:${port}/map/rigs.json` });
  t.equal(markers.status, 401, '/map/rigs.json without a session: 401');
  t.equal(JSON.parse(markers.body).success, false, 'a JSON error');
  t.ok(!markers.body.includes('rig7'), 'no rig in it');
  const detail = await net.request('rig', { url: `http://10.144.35.1:${port}/rigs/rig7` });
  t.equal(detail.status, 302, '/rigs/rig7 without a session: 302 to the login page');
  const forged = await net.request('rig', { url: `http://10.144.35.1:${port}/rigs`, headers: { cookie: '_service_pm_session=Fe26.2**forged' } });
  t.equal(forged.status, 302, 'a forged session cookie: the login page');

  // The rig's own browser: the login page, and nothing else with a wrong password.
  await withPage(
    async (page, browser) => {
      await page.goto(`http://10.144.35.1:${port}/rigs`);
      t.equal(new URL(page.url()).pathname, '/login', 'Chromium on the rig lands on /login');
      t.equal(await page.locator('h1').textContent(), 'Log in', 'the login page');
      t.notOk((await page.content()).includes('rig7'), 'no fleet on it');
      await page.fill('#login', 'ops');
      await page.fill('#password', 'a-wrong-password');
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      t.equal(await page.locator('p.error').textContent(), 'Wrong user name or password.', 'a wrong password: the form again, saying so');
      t.notOk((await page.content()).includes('rig7'), 'still no fleet');
      await page.fill('#password', 'the-right-password');
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      t.equal(new URL(page.url()).pathname, '/rigs', 'the right password: back to /rigs');
      t.equal(await page.locator('table.rigs tbody tr').count(), 1, 'the fleet: one rig');
      t.ok((await page.locator('table.rigs').textContent())?.includes('rig7'), 'rig7 in it');
      const cookie = (await browser.context.cookies()).find((c) => c.name === '_service_pm_session');
      t.ok(cookie?.httpOnly, 'the session cookie, HttpOnly');
      t.equal(cookie?.sameSite, 'Lax', 'SameSite=Lax');
      await page.goto(`http://10.144.35.1:${port}/rigs/rig7`);
      t.ok((await page.locator('h1').textContent())?.includes('rig7'), 'the rig page');
      await page.goto(`http://10.144.35.1:${port}/map`);
      const json = await page.evaluate(async () => (await fetch('/map/rigs.json')).status);
      t.equal(json, 200, "the map's markers load with the session");
      await Promise.all([page.waitForNavigation(), page.click('form.logout button')]);
      t.equal(new URL(page.url()).pathname, '/login', 'logged out: the login page');
      await page.goto(`http://10.144.35.1:${port}/map`);
      t.equal(new URL(page.url()).pathname, '/login', 'the map asks for the login again');
      t.equal(new URL(page.url()).searchParams.get('next'), '/map', 'and comes back to the map after it');
      t.deepEqual(browser.pageErrors.filter((e) => !/401|Failed to load resource/.test(e)), [], 'no page errors');
    },
    { netns: net.host('rig').ns },
  );

  const outside = await net.request('monitor', { url: `http://10.144.34.1:${port}/login` });
  t.equal(outside.status, 403, 'the login page itself only for page.allow');
  const evilNext = await net.request('operator', {
    url: `http://10.144.33.1:${port}/login`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ login: 'ops', password: 'the-right-password', next: '//attacker.example/x' }).toString(),
  });
  t.equal(evilNext.status, 303, 'a login with a next pointing elsewhere');
  t.equal(evilNext.headers.location, '/rigs', 'goes to /rigs, never to another site');
  const crossSite = await net.request('operator', {
    url: `http://10.144.33.1:${port}/login`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://attacker.example' },
    body: new URLSearchParams({ login: 'ops', password: 'the-right-password' }).toString(),
  });
  t.equal(crossSite.status, 403, 'a login form posted from another site: 403');

  const kinds = (await readAudit(s.app.db.reader, {})).filter((e) => e.client === '10.144.35.2').map((e) => e.kind);
  t.deepEqual(kinds, ['login.failed', 'login.ok', 'session.revoked'], 'the failed login, the login and the logout, with the rig address');
});

test('a reverse proxy on loopback: everything it forwards is loopback, unless it is a trusted proxy', async (t) => {
  // The proxy is this test process on 127.0.0.1, forwarding for an outside client and for a rig.
  const outsideClient = { 'x-forwarded-for': '192.0.2.50' };
  const open = await startServer({ vpn: { cidr: VPN_CIDR } });
  servers.push(open);
  await report(open, 'rig7').catch(() => undefined);
  for (const path of ['/rigs', '/map/rigs.json', '/metrics']) {
    t.equal((await http(`${open.url}${path}`, { headers: outsideClient })).status, 200, `no trusted_proxies: ${path} forwarded for 192.0.2.50 is loopback: 200 (exposed)`);
  }
  const trusted = await startServer({ vpn: { cidr: VPN_CIDR }, server: { trusted_proxies: ['127.0.0.1', '::1'] } });
  servers.push(trusted);
  for (const path of ['/rigs', '/map/rigs.json', '/metrics', '/healthz']) {
    const res = await http(`${trusted.url}${path}`, { headers: outsideClient });
    t.equal(res.status, 403, `trusted_proxies [127.0.0.1, ::1]: ${path} forwarded for 192.0.2.50: 403`);
    if (path === '/rigs') t.ok(res.text.includes('This request came from <code>192.0.2.50</code>'), 'judged by the forwarded client');
  }
  const forged = await http(`${trusted.url}/rigs`, { headers: { 'x-forwarded-for': '127.0.0.1, 192.0.2.50' } });
  t.equal(forged.status, 403, 'a loopback entry the client wrote itself further left is not believed');
  t.equal((await http(`${trusted.url}/rigs`, { headers: { 'x-forwarded-for': '10.144.35.9' } })).status, 200, 'forwarded for a VPN client: 200, as rigs see it');
  t.equal((await http(`${trusted.url}/rigs`)).status, 200, 'local monitoring talking to rigd directly is still loopback');
});

test('teardown', async (t) => {
  for (const s of servers) await s.close();
  await net.destroy();
  t.pass('closed');
});
