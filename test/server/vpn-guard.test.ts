// The VPN rule from real client addresses: clients in network namespaces (veth pairs), the server
// bound on `::` so that IPv4 peers arrive IPv4-mapped (::ffff:10.144.x.y), as on the gateway.
import test from 'tape';
import type { Request } from '@hapi/hapi';
import { parseAddress } from '../../src/server/client-address.ts';
import { hostOf, vpnRule } from '../../src/server/ext/vpn-guard.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts, type HttpRequest } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
let net: Hosts;
let s: TestServer;
let port = 0;
const reached: string[] = [];

/** Server on ::, clients inside and outside 10.144.0.0/16, a trusted proxy. */
const setup = fixture(async () => {
  net = await createHosts([
    { name: 'inside', addr: '10.144.61.2', gw: '10.144.61.1' },
    { name: 'outside', addr: '10.145.61.2', gw: '10.145.61.1' },
    { name: 'proxy', addr: '10.146.61.2', gw: '10.146.61.1' },
  ]);
  s = await startServer({ server: { trusted_proxies: ['10.146.61.2'] } }, { host: '::' });
  port = Number(s.server.info.port);
  // Routes carrying the flag, added the way any route sets it.
  s.server.route([
    { method: 'PUT', path: '/guarded/rig/{id}', options: { auth: false, app: { vpn: 'rig' }, payload: { allow: 'text/plain' }, handler: (r) => (reached.push(`rig ${r.params.id}`), 'passed') } },
    { method: 'GET', path: '/guarded/viewer', options: { auth: false, app: { vpn: 'viewer' }, handler: () => (reached.push('viewer'), 'passed') } },
    { method: 'GET', path: '/open', options: { auth: false, handler: () => 'open' } },
  ]);
});

function rigReq(from: 'inside' | 'outside' | 'proxy', host: string | null, extra: Partial<HttpRequest> = {}): HttpRequest {
  const gw = net.host(from).serverAddr;
  return {
    url: `http://${gw}:${port}/guarded/rig/r1`,
    method: 'PUT',
    headers: { ...(host === null ? {} : { host }), 'content-type': 'text/plain', ...(extra.headers as Record<string, string> | undefined) },
    body: 'x',
    ...(host === null ? { omitHost: true } : {}),
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'headers')),
  };
}

test('allowed: Host = vpn.host, a 10.144 address with port, upper case; client inside', async (t) => {
  await setup();
  const cases: [string, string][] = [
    ['vpn.host', VPN_HOST],
    ['vpn.host with port', `${VPN_HOST}:${port}`],
    ['upper case', 'VPN.Rigs.INTERNAL'],
    ['10.144 address with port', `10.144.61.1:${port}`],
    ['10.144 address without port', '10.144.200.7'],
  ];
  reached.length = 0;
  const res = await net.requestAll('inside', cases.map(([, host]) => rigReq('inside', host)));
  cases.forEach(([name], i) => t.deepEqual([res[i].status, res[i].body], [200, 'passed'], `${name}: 200`));
  t.equal(reached.length, cases.length, 'each reached the handler');
});

test('refused: other names, names that look like addresses, addresses outside vpn.cidr', async (t) => {
  await setup();
  const hosts = [
    'example.com',
    'rigs.internal',
    'vpn.rigs.internal.evil.example',
    'evil-vpn.rigs.internal',
    'vpn.rigs.internal.',
    '10.144.evil.example',
    '10.144.1.1.nip.io',
    '10.145.61.1',
    `10.145.0.9:${port}`,
    '10.144',
    '0x0a.0x90.0.1',
    '010.144.0.1',
    '[::ffff:10.144.61.1]',
  ];
  reached.length = 0;
  const res = await net.requestAll('inside', hosts.map((h) => rigReq('inside', h)));
  hosts.forEach((h, i) => {
    t.equal(res[i].status, 403, `Host "${h}": 403`);
    t.equal(res[i].headers['content-type'], 'text/html; charset=UTF-8', `Host "${h}": text/html; charset=UTF-8`);
  });
  t.match(res[5].body, /Blocked host: 10\.144\.evil\.example/, 'the page names the blocked host');
  t.match(res[5].body, /^<!DOCTYPE html>/, 'an HTML page, not JSON');
  const noHost = await net.request('inside', rigReq('inside', null));
  t.equal(noHost.status, 400, 'no Host header at all: refused (400 from the HTTP layer)');
  t.deepEqual(reached, [], 'no refused request reached the handler');
});

test('refused: a client outside the range with the right Host; a spoofed X-Forwarded-For', async (t) => {
  await setup();
  reached.length = 0;
  const [plain, spoofed, spoofedChain] = await net.requestAll('outside', [
    rigReq('outside', VPN_HOST),
    rigReq('outside', VPN_HOST, { headers: { 'x-forwarded-for': '10.144.61.2' } }),
    rigReq('outside', VPN_HOST, { headers: { 'x-forwarded-for': '10.144.61.2, 10.144.0.1' } }),
  ]);
  t.equal(plain.status, 403, 'client 10.145.61.2 with Host vpn.host: 403');
  t.match(plain.body, /Blocked client: 10\.145\.61\.2/, 'blocked page, naming the client address');
  t.equal(spoofed.status, 403, 'X-Forwarded-For from an untrusted peer does not count');
  t.equal(spoofedChain.status, 403, 'nor a chain of them');
  // A peer inside the range claiming to forward for an outsider is still judged by its own address.
  const inside = await net.request('inside', rigReq('inside', VPN_HOST, { headers: { 'x-forwarded-for': '192.0.2.1' } }));
  t.equal(inside.status, 200, 'X-Forwarded-For from an untrusted inside peer is ignored: judged by the socket peer');
  t.deepEqual(reached, ['rig r1'], 'only the inside request reached the handler');
});

test('trusted proxy: its X-Forwarded-For decides', async (t) => {
  await setup();
  const [fwdInside, fwdOutside, noHeader, badHeader] = await net.requestAll('proxy', [
    rigReq('proxy', VPN_HOST, { headers: { 'x-forwarded-for': '10.144.9.9' } }),
    rigReq('proxy', VPN_HOST, { headers: { 'x-forwarded-for': '10.144.9.9, 203.0.113.4' } }),
    rigReq('proxy', VPN_HOST),
    rigReq('proxy', VPN_HOST, { headers: { 'x-forwarded-for': 'not-an-address' } }),
  ]);
  t.equal(fwdInside.status, 200, 'proxy forwarding for 10.144.9.9: 200');
  t.equal(fwdOutside.status, 403, 'proxy forwarding for 203.0.113.4 (right-most untrusted hop): 403');
  t.equal(noHeader.status, 403, 'the proxy itself (10.146.61.2) is outside the range: 403');
  t.equal(badHeader.status, 403, 'unparseable X-Forwarded-For: 403');
});

test('refused: loopback client, even with the right Host', async (t) => {
  await setup();
  const res = await http(`http://127.0.0.1:${port}/guarded/rig/r1`, { method: 'PUT', headers: { host: VPN_HOST, 'content-type': 'text/plain' }, body: 'x' });
  t.equal(res.status, 403, 'loopback: 403');
  t.equal(res.headers['content-type'], 'text/html; charset=UTF-8', 'HTML refusal');
  t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', 'common headers still present');
});

test('the blocked host is escaped; the guard is per route and sees through trailing slashes', async (t) => {
  await setup();
  const evil = '"><script>alert(1)</script>';
  const res = await net.request('inside', rigReq('inside', evil));
  t.equal(res.status, 403, 'markup in Host: 403');
  t.notOk(res.body.includes('<script>'), 'no markup from the Host in the page');
  t.ok(res.body.includes('Blocked host: &#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;'), 'Host escaped in the page');
  const slash = await net.request('outside', { url: `http://10.145.61.1:${port}/guarded/rig/r1/`, method: 'PUT', headers: { host: VPN_HOST, 'content-type': 'text/plain' }, body: 'x' });
  t.equal(slash.status, 403, 'trailing slash reaches the same route and the same guard');
  const open = await net.request('outside', { url: `http://10.145.61.1:${port}/open`, headers: { host: 'anything.example' } });
  t.deepEqual([open.status, open.body], [200, 'open'], 'a route without the flag is not guarded');
  const missing = await net.request('outside', { url: `http://10.145.61.1:${port}/nowhere`, headers: { host: 'anything.example' } });
  t.equal(missing.status, 404, 'an unknown path is a plain 404');
});

test("viewer mode: VPN and loopback clients; names other than vpn.host are refused (DNS rebinding)", async (t) => {
  await setup();
  const url = (from: 'inside' | 'outside') => `http://${net.host(from).serverAddr}:${port}/guarded/viewer`;
  const [byName, byAddr, rebound] = await net.requestAll('inside', [
    { url: url('inside'), headers: { host: VPN_HOST } },
    { url: url('inside') },
    { url: url('inside'), headers: { host: 'attacker.example' } },
  ]);
  t.equal(byName.status, 200, 'inside, Host vpn.host: 200');
  t.equal(byAddr.status, 200, 'inside, Host the gateway address: 200');
  t.equal(rebound.status, 403, 'inside, Host another name: 403');
  const outside = await net.request('outside', { url: url('outside'), headers: { host: VPN_HOST } });
  t.equal(outside.status, 403, 'outside client: 403');
  const lo = await http(`http://127.0.0.1:${port}/guarded/viewer`);
  t.equal(lo.status, 200, 'loopback, Host 127.0.0.1: 200');
  const lo6 = await http(`http://[::1]:${port}/guarded/viewer`);
  t.equal(lo6.status, 200, 'loopback ::1, Host [::1]: 200');
  const loName = await http(`http://127.0.0.1:${port}/guarded/viewer`, { headers: { host: `localhost:${port}` } });
  t.equal(loName.status, 200, 'loopback, Host localhost: 200');
  const loEvil = await http(`http://127.0.0.1:${port}/guarded/viewer`, { headers: { host: 'attacker.example' } });
  t.equal(loEvil.status, 403, 'loopback, Host another name: 403');
});

test('a Host judged for one mode is judged again for the other (the verdicts are kept per mode)', (t) => {
  const rule = vpnRule({ vpn: { host: VPN_HOST, cidr: '10.144.0.0/16', rig_domain: 'rigs.internal' } });
  const inside = parseAddress('10.144.9.9');
  const request = (host: string) => ({ headers: { host }, app: { client: inside } }) as unknown as Request;
  for (let round = 0; round < 2; round++) {
    t.ok(rule.allows('viewer', request('localhost:3000')), `round ${round}: localhost is a viewer Host`);
    t.notOk(rule.allows('rig', request('localhost:3000')), `round ${round}: but not a rig Host`);
    t.ok(rule.allows('rig', request('10.144.0.1')), `round ${round}: a VPN address is a rig Host`);
    t.equal(rule.check('rig', request('localhost:3000'))?.failed, 'host', `round ${round}: the refusal names the Host`);
  }
  t.end();
});

test('hostOf: lower case, port stripped, IPv6 brackets kept', (t) => {
  t.equal(hostOf('VPN.Rigs.Internal:3000'), 'vpn.rigs.internal');
  t.equal(hostOf('10.144.1.1:'), '10.144.1.1');
  t.equal(hostOf('[::1]:3000'), '[::1]');
  t.equal(hostOf('host:abc'), 'host:abc', 'a non-numeric port is not stripped (and then not vpn.host)');
  t.equal(hostOf(undefined), '');
  t.end();
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
