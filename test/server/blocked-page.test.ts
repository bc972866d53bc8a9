// The VPN guard's 403 page names the address the request came from, which check failed (Host or
// client: the heading blames the one that failed), and the allowed network and Host names;
// everything from the request is escaped; pages for people link back to /rigs.
// Real clients in network namespaces, the server on `::` (IPv4 peers arrive IPv4-mapped).
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
let net: Hosts;
let s: TestServer;
let port = 0;

/** Clients inside and outside 10.144.0.0/16, a trusted proxy outside it. */
const setup = fixture(async () => {
  net = await createHosts([
    { name: 'inside', addr: '10.144.171.2', gw: '10.144.171.1' },
    { name: 'outside', addr: '10.145.171.2', gw: '10.145.171.1' },
    { name: 'proxy', addr: '10.145.172.2', gw: '10.145.172.1' },
  ]);
  s = await startServer({ server: { trusted_proxies: ['10.145.172.2'] } }, { host: '::' });
  port = Number(s.server.info.port);
});

const VIEWER_ALLOWED = 'Allowed: clients in <code>10.144.0.0/16</code> or loopback, with Host vpn.rigs.internal, localhost or an IP address.';
const RIG_ALLOWED = 'Allowed: clients in <code>10.144.0.0/16</code>, with Host vpn.rigs.internal or an IPv4 address in 10.144.0.0/16.';

test('blocked host: a VPN client with a foreign Host on /rigs', async (t) => {
  await setup();
  const res = await net.request('inside', { url: `http://10.144.171.1:${port}/rigs`, headers: { host: 'evil.example' } });
  t.deepEqual([res.status, res.headers['content-type']], [403, 'text/html; charset=UTF-8'], '403 HTML');
  t.ok(res.body.includes('<h1>Blocked host: evil.example</h1>'), "the seed's heading");
  t.ok(res.body.includes('This request came from <code>10.144.171.2</code>.'), 'names the client address (not IPv4-mapped)');
  t.ok(res.body.includes('The Host header is not allowed here.'), 'says the Host failed');
  t.ok(res.body.includes(VIEWER_ALLOWED), 'names the allowed network and Host names');
});

test('blocked peer: a client outside the VPN with the right Host, on /rigs and on a rig endpoint', async (t) => {
  await setup();
  const page = await net.request('outside', { url: `http://10.145.171.1:${port}/rigs`, headers: { host: VPN_HOST } });
  t.equal(page.status, 403, '/rigs: 403');
  t.ok(page.body.includes('<h1>Blocked client: 10.145.171.2</h1>'), 'the heading blames the client address, not the Host');
  t.notOk(page.body.includes('Blocked host'), 'nothing says the Host was blocked');
  t.ok(page.body.includes('<a href="/rigs">'), 'a page for people: a link back to /rigs');
  t.ok(page.body.includes('This request came from <code>10.145.171.2</code>.'), 'names the client address');
  t.ok(page.body.includes('The client address is outside <code>10.144.0.0/16</code> or loopback.'), 'says the client failed, and which network is allowed');
  t.ok(page.body.includes(VIEWER_ALLOWED), 'allowed network and Host names');

  const rig = await net.request('outside', {
    url: `http://10.145.171.1:${port}/api/v1/rigs/rig1`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'rig_serial=S1',
  });
  t.equal(rig.status, 403, 'PUT /api/v1/rigs/rig1: 403');
  t.ok(rig.body.includes('This request came from <code>10.145.171.2</code>.'), 'names the client address');
  t.ok(rig.body.includes('The client address is outside <code>10.144.0.0/16</code>.'), 'rig endpoints: no loopback');
  t.ok(rig.body.includes('<h1>Blocked client: 10.145.171.2</h1>'), 'a rig endpoint: the client blamed too');
  t.notOk(rig.body.includes('href="/rigs"'), 'no link to the pages on a rig endpoint');
  t.ok(rig.body.includes(RIG_ALLOWED), 'the rig rule in words');
  const lo = await http(`http://127.0.0.1:${port}/api/v1/rigs/rig1`, { method: 'PUT', headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' }, body: 'rig_serial=S1' });
  t.equal(lo.status, 403, 'loopback on a rig endpoint: 403');
  t.ok(lo.text.includes('This request came from <code>127.0.0.1</code>.'), 'names loopback');
  t.equal(await s.app.db.models.Rig.count(), 0, 'no refused report was stored');
});

test('through a trusted proxy: the forwarded address is named; an unreadable one says so', async (t) => {
  await setup();
  const [fwd, garbage] = await net.requestAll('proxy', [
    { url: `http://10.145.172.1:${port}/rigs`, headers: { host: VPN_HOST, 'x-forwarded-for': '203.0.113.9' } },
    { url: `http://10.145.172.1:${port}/rigs`, headers: { host: VPN_HOST, 'x-forwarded-for': '<script>alert(1)</script>' } },
  ]);
  t.equal(fwd.status, 403, 'forwarded for 203.0.113.9: 403');
  t.ok(fwd.body.includes('This request came from <code>203.0.113.9</code>.'), 'names the forwarded client');
  t.equal(garbage.status, 403, 'unreadable X-Forwarded-For: 403');
  t.ok(garbage.body.includes('This request came from an address that could not be read.'), 'says it could not be read');
  t.notOk(garbage.body.includes('<script'), 'nothing of the header as markup');
});

test('escaped: markup in the Host header', async (t) => {
  await setup();
  const evil = '"><script>alert(1)</script>';
  const res = await net.request('inside', { url: `http://10.144.171.1:${port}/rigs`, headers: { host: evil } });
  t.equal(res.status, 403, '403');
  t.notOk(res.body.includes('<script'), 'no markup from the request');
  t.ok(res.body.includes('Blocked host: &#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;'), 'Host escaped');
  t.ok(res.body.includes('This request came from <code>10.144.171.2</code>.'), 'still names the client');
});

test('allowed requests are unchanged', async (t) => {
  await setup();
  const ok = await net.request('inside', { url: `http://10.144.171.1:${port}/rigs`, headers: { host: VPN_HOST } });
  t.equal(ok.status, 200, 'VPN client with vpn.host: 200');
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
