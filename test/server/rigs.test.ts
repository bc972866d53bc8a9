// PUT /api/v1/rigs/:id, GET /api/v1/rigs and GET /api/v1/rigs/:id/reports from real VPN addresses
// (network namespaces, server on ::, peers IPv4-mapped).
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { weakEtag } from '../../src/server/ext/headers.ts';
import { createHosts, type Hosts, type HttpRequest, type HttpResponse } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
const FORM = 'application/x-www-form-urlencoded';
let net: Hosts;
let s: TestServer;
let base = '';
let token = '';

const extra = Array.from({ length: 99 }, (_, i) => `10.144.70.${i + 3}`);

const setup = fixture(async () => {
  net = await createHosts([
    { name: 'rigs', addr: '10.144.70.2', gw: '10.144.70.1', extraAddrs: extra },
    { name: 'outside', addr: '10.145.70.2', gw: '10.145.70.1' },
  ]);
  s = await startServer({}, { host: '::' });
  base = `http://10.144.70.1:${s.server.info.port}`;
  token = (await userWithToken(s, 'ops')).token;
});

function put(id: string, body: string, opts: { type?: string; from?: string } = {}): HttpRequest {
  return {
    url: `${base}/api/v1/rigs/${id}`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': opts.type ?? FORM },
    body,
    ...(opts.from ? { localAddress: opts.from } : {}),
  };
}

const form = (f: Record<string, string>) => new URLSearchParams(f).toString();
const full = (serial: string) => form({ rig_serial: serial, gpsd_latitude: '47.37', gpsd_longitude: '8.54', local_ip: '192.168.8.20', software_version: '3.1.0', git_branch: 'main' });

function isOk(t: test.Test, res: HttpResponse, msg: string): void {
  t.deepEqual([res.status, res.headers['content-type'], res.body], [200, 'text/plain; charset=utf-8', 'Ok'], msg);
}

test('a form report: 200 text/plain "Ok"; the rig is registered with its VPN address', async (t) => {
  await setup();
  const res = await net.request('rigs', put('Rig-A', full('SN-A')));
  isOk(t, res, '200 text/plain; charset=utf-8, body exactly Ok');
  const rig = await s.app.rigs.get('rig-a');
  t.deepEqual([rig.serial, rig.latitude, rig.longitude, rig.lan_ip, rig.vpn_address, rig.version, rig.branch], ['SN-A', 47.37, 8.54, '192.168.8.20', '10.144.70.2', '3.1.0', 'main'], 'stored, with the IPv4 peer (not ::ffff:)');
  const json = await net.request('rigs', put('rig-a', JSON.stringify({ rig_serial: 'SN-A', gpsd_latitude: 47.5, gpsd_longitude: 'nan' }), { type: 'application/json' }));
  isOk(t, json, 'a JSON report is accepted too');
  t.deepEqual([(await s.app.rigs.get('rig-a')).latitude, (await s.app.rigs.get('rig-a')).longitude], [47.5, null], 'JSON values stored; nan = no fix');
  const noFix = await net.request('rigs', put('rig-b', form({ rig_serial: 'SN-B', gpsd_latitude: '', gpsd_longitude: 'NaN' })));
  isOk(t, noFix, 'no fix: still 200');
});

test('bad input: 400 text/plain, one line saying what is wrong; nothing stored', async (t) => {
  await setup();
  const before = await s.app.db.models.RigReport.count();
  const cases: [string, HttpRequest, RegExp][] = [
    ['missing rig_serial', put('rig-c', form({ gpsd_latitude: '1' })), /^rig_serial is required$/],
    ['latitude out of range', put('rig-c', form({ rig_serial: 'x', gpsd_latitude: '91' })), /^gpsd_latitude must be a decimal number between -90 and 90, empty or nan$/],
    ['longitude not a decimal', put('rig-c', form({ rig_serial: 'x', gpsd_longitude: '8,5' })), /^gpsd_longitude must be a decimal/],
    ['local_ip not an address', put('rig-c', form({ rig_serial: 'x', local_ip: 'rig.lan' })), /^local_ip must be an IP address$/],
    ['version too long', put('rig-c', form({ rig_serial: 'x', software_version: 'v'.repeat(129) })), /^software_version must be at most 128 characters$/],
    ['branch with a control character', put('rig-c', form({ rig_serial: 'x', git_branch: 'a\u0007b' })), /^git_branch must be printable text/],
    ['repeated field', put('rig-c', 'rig_serial=a&rig_serial=b'), /^rig_serial must be given once$/],
    ['id not a DNS label', put('rig_c', full('x')), /^rig id must be a DNS label/],
    ['id too long', put('r'.repeat(64), full('x')), /^rig id must be a DNS label/],
    ['malformed JSON', put('rig-c', '{"rig_serial":', { type: 'application/json' }), /^the request body is not valid JSON$/],
  ];
  const res = await net.requestAll('rigs', cases.map((c) => c[1]));
  cases.forEach(([name, , re], i) => {
    t.equal(res[i].status, 400, `${name}: 400`);
    t.equal(res[i].headers['content-type'], 'text/plain; charset=utf-8', `${name}: text/plain`);
    const lines = res[i].body.split('\n');
    t.ok(lines.length === 2 && lines[1] === '' && re.test(lines[0]), `${name}: one line "${lines[0]}"`);
  });
  const [type, big] = await net.requestAll('rigs', [put('rig-c', 'rig_serial=x', { type: 'text/plain' }), put('rig-c', `rig_serial=${'x'.repeat(20_000)}`)]);
  t.deepEqual([type.status, type.headers['content-type']], [415, 'text/plain; charset=utf-8'], 'other content type: 415 text/plain');
  t.deepEqual([big.status, big.headers['content-type']], [413, 'text/plain; charset=utf-8'], 'oversized body: 413 text/plain');
  t.equal(await s.app.db.models.RigReport.count(), before, 'no history row for any refused report');
  t.equal(await s.app.db.models.Rig.findByPk('rig-c'), null, 'no rig registered');
});

test('100 concurrent reports from 100 rigs at 100 addresses: 100 x 200 and exactly 100 history rows', async (t) => {
  await setup();
  await s.app.db.models.RigReport.destroy({ where: {} });
  const addrs = ['10.144.70.2', ...extra];
  const reqs = addrs.map((a, i) => put(`load${i}`, full(`L${i}`), { from: a }));
  const res = await net.requestAll('rigs', reqs);
  t.equal(res.filter((r) => r.status === 200 && r.body === 'Ok').length, 100, '100 x 200 Ok');
  t.equal(await s.app.db.models.RigReport.count(), 100, 'exactly 100 history rows');
  const rigs = await s.app.rigs.list();
  const load = rigs.filter((r) => r.id.startsWith('load'));
  t.equal(load.length, 100, '100 rigs');
  t.ok(load.every((r) => r.vpn_address === addrs[Number(r.id.slice(4))]), 'each rig carries the address it reported from');
  t.deepEqual(load.slice(0, 12).map((r) => r.id), ['load0', 'load1', 'load2', 'load3', 'load4', 'load5', 'load6', 'load7', 'load8', 'load9', 'load10', 'load11'], 'natural order');
});

test('GET /api/v1/rigs: token and VPN rule; status, position, version, serial, project', async (t) => {
  await setup();
  const get = (path: string, headers: Record<string, string> = {}): HttpRequest => ({ url: `${base}${path}`, headers: { host: VPN_HOST, ...headers } });
  const [ok, online, noToken, badStatus] = await net.requestAll('rigs', [
    get('/api/v1/rigs', { authorization: token }),
    get('/api/v1/rigs?status=offline', { authorization: token }),
    get('/api/v1/rigs'),
    get('/api/v1/rigs?status=sleeping', { authorization: token }),
  ]);
  t.equal(ok.status, 200, '200 with a token from the VPN');
  t.equal(ok.headers['content-type'], 'application/json; charset=utf-8', 'JSON');
  const body = JSON.parse(ok.body);
  const a = body.data.rigs.find((r: { id: string }) => r.id === 'rig-a');
  t.equal(body.success, true, 'success');
  t.deepEqual(
    Object.keys(a).sort(),
    ['bound_address', 'branch', 'created_at', 'current_project', 'id', 'lan_ip', 'last_seen_at', 'latitude', 'longitude', 'offline_since', 'online_since', 'report_interval_s', 'serial', 'status', 'version', 'vpn_address', 'vpn_name'],
    'fields (online_since / offline_since, bound_address, report_interval_s added)',
  );
  t.deepEqual([a.status, a.serial, a.latitude, a.current_project, a.vpn_name], ['online', 'SN-A', 47.5, null, 'rig-a.rigs.internal'], 'values');
  t.deepEqual(JSON.parse(online.body).data.rigs, [], '?status=offline: none');
  t.equal(noToken.status, 401, 'no token: 401');
  t.equal(badStatus.status, 400, 'unknown status: 400');
  const outside = await net.request('outside', { url: `http://10.145.70.1:${s.server.info.port}/api/v1/rigs`, headers: { host: VPN_HOST, authorization: token } });
  t.equal(outside.status, 403, 'a token does not lift the VPN rule');
  const lo = await http(`http://127.0.0.1:${s.server.info.port}/api/v1/rigs`, { headers: { authorization: token } });
  t.equal(lo.status, 403, 'loopback: 403 (everything under /api/v1/rigs is for the VPN)');
});

test('GET /api/v1/rigs and /rigs from the cached list: ETag over the bytes, 304, a report shows in the next listing', async (t) => {
  await setup();
  const get = (path: string, headers: Record<string, string> = {}): HttpRequest => ({ url: `${base}${path}`, headers: { host: VPN_HOST, authorization: token, ...headers } });
  const first = await net.request('rigs', get('/api/v1/rigs'));
  t.equal(first.status, 200, '200');
  t.equal(first.headers['etag'], weakEtag(first.body), 'ETag over the exact bytes sent');
  t.equal(first.headers['cache-control'], 'max-age=0, private, must-revalidate', 'revalidate');
  const same = await net.request('rigs', get('/api/v1/rigs', { 'if-none-match': String(first.headers['etag']) }));
  t.deepEqual([same.status, same.body, same.headers['etag']], [304, '', first.headers['etag']], 'unchanged: 304 with the same ETag');
  t.notOk(JSON.parse(first.body).data.rigs.some((r: { id: string }) => r.id === 'rig-new'), 'rig-new not there yet');
  const page = await net.request('rigs', get('/rigs'));
  t.notOk(page.body.includes('rig-new'), 'nor on the page');
  isOk(t, await net.request('rigs', put('rig-new', full('SN-NEW'))), 'a report');
  const next = await net.request('rigs', get('/api/v1/rigs', { 'if-none-match': String(first.headers['etag']) }));
  t.equal(next.status, 200, 'the old ETag no longer matches: 200');
  t.notEqual(next.headers['etag'], first.headers['etag'], 'a new ETag');
  t.ok(JSON.parse(next.body).data.rigs.some((r: { id: string; status: string }) => r.id === 'rig-new' && r.status === 'online'), 'the report shows in the next listing');
  const online = JSON.parse((await net.request('rigs', get('/api/v1/rigs?status=online'))).body).data.rigs.map((r: { id: string }) => r.id);
  t.ok(online.includes('rig-new') && online.includes('rig-a'), 'the status filter has its own body');
  t.ok((await net.request('rigs', get('/rigs'))).body.includes('rig-new'), 'and on the next page');
});

test('GET /api/v1/rigs/:id/reports: newest first, since/until/limit, CSV export', async (t) => {
  await setup();
  const csvRig = form({ rig_serial: '=cmd|x', gpsd_latitude: '-1.5', local_ip: '10.1.1.1', software_version: 'a,"b"', git_branch: 'x' });
  for (const serial of ['H1', 'H2', 'H3']) t.equal((await net.request('rigs', put('hist', full(serial)))).status, 200, `report ${serial}`);
  t.equal((await net.request('rigs', put('hist', csvRig))).status, 200, 'report with CSV-hostile text');
  const get = (q: string) => net.request('rigs', { url: `${base}/api/v1/rigs/HIST/reports${q}`, headers: { host: VPN_HOST, authorization: token } });
  const all = JSON.parse((await get('')).body).data;
  t.deepEqual(all.reports.map((r: { rig_serial: string }) => r.rig_serial), ['=cmd|x', 'H3', 'H2', 'H1'], 'newest first');
  t.equal(all.rig, 'hist', 'rig id');
  const limited = JSON.parse((await get('?limit=2')).body).data;
  t.deepEqual(limited.reports.map((r: { rig_serial: string }) => r.rig_serial), ['=cmd|x', 'H3'], 'limit=2');
  const until = all.reports[1].received_at;
  const windowed = JSON.parse((await get(`?until=${encodeURIComponent(until)}`)).body).data;
  t.deepEqual(windowed.reports.map((r: { rig_serial: string }) => r.rig_serial), ['H2', 'H1'], 'until is exclusive');
  const since = JSON.parse((await get(`?since=${encodeURIComponent(until)}`)).body).data;
  t.deepEqual(since.reports.map((r: { rig_serial: string }) => r.rig_serial), ['=cmd|x', 'H3'], 'since is inclusive');
  t.equal((await get('?limit=10001')).status, 400, 'limit above the cap: 400');
  t.equal((await get('?since=yesterday')).status, 400, 'bad date: 400');
  const missing = await net.request('rigs', { url: `${base}/api/v1/rigs/nope/reports`, headers: { host: VPN_HOST, authorization: token } });
  t.deepEqual([missing.status, JSON.parse(missing.body).error.code], [404, 'rig_not_found'], 'unknown rig: 404');
  const csv = await get('?format=csv');
  t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8', 'CSV content type');
  t.equal(csv.headers['content-disposition'], 'attachment; filename="hist-reports.csv"', 'download name');
  const lines = csv.body.split('\r\n');
  t.equal(lines[0], 'received_at,rig_serial,gpsd_latitude,gpsd_longitude,local_ip,software_version,git_branch,peer_address', 'header row');
  t.equal(lines[1], `${all.reports[0].received_at},'=cmd|x,-1.5,,10.1.1.1,"a,""b""",x,10.144.70.2`, 'quoted, formula neutralised, numbers untouched');
  t.equal(lines.length, 6, 'four rows, header, final CRLF');
  t.deepEqual(Object.keys(all.reports[0]), (lines[0] ?? '').split(','), 'the JSON fields are the CSV columns: same names, same order');
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
