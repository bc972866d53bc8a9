// A rig is its VPN address (rigs.address_binding): reports for an id bound to another address are
// refused with 409 and store nothing, in each of the three modes, from real VPN addresses
// (network namespaces); `rigd rigs rebind` and `rigd rigs forget` move and free an id.
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { rigd } from '../helpers/cli.ts';
import { createHosts, type Hosts, type HttpRequest, type HttpResponse } from '../helpers/netns.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
const A = '10.144.20.2';
const B = '10.144.20.3';
let net: Hosts;
const servers: TestServer[] = [];

const setup = fixture(async () => {
  net = await createHosts([{ name: 'vpn', addr: A, gw: '10.144.20.1', extraAddrs: [B] }]);
});

/** A server in one mode (offline after rigs.offline_after_s, 3600 s, of silence). */
async function server(mode: 'strict' | 'while_online' | 'off'): Promise<TestServer> {
  await setup();
  const s = await startServer({ rigs: { address_binding: mode } }, { host: '0.0.0.0' });
  servers.push(s);
  return s;
}

/** The rig's bound address has been silent for longer than offline_after_s: its last report is 2 hours old. */
async function silence(s: TestServer, id: string): Promise<void> {
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  await s.app.db.models.Rig.update({ last_seen_at: twoHoursAgo }, { where: { id } });
}

function report(s: TestServer, id: string, from: string, fields: Record<string, string>): Promise<HttpResponse> {
  const req: HttpRequest = {
    url: `http://10.144.20.1:${s.server.info.port}/api/v1/rigs/${id}`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    localAddress: from,
  };
  return net.request('vpn', req);
}

const honest = { rig_serial: 'SN-5', gpsd_latitude: '47.1', gpsd_longitude: '8.5', software_version: '3.1.0', git_branch: 'main' };
const evil = { rig_serial: 'SN-5', gpsd_latitude: '1', gpsd_longitude: '1', software_version: '6.6.6', git_branch: 'evil' };

/** What is stored of rig5: its state and the number of its history rows. */
async function stored(s: TestServer, id = 'rig5') {
  const rig = await s.app.rigs.get(id);
  const reports = await s.app.db.models.RigReport.count({ where: { rig_id: id } });
  return { version: rig.version, branch: rig.branch, latitude: rig.latitude, vpn_address: rig.vpn_address, bound: rig.bound_address, reports };
}

function isRefusal(t: test.Test, res: HttpResponse, id: string, why: RegExp, msg: string): void {
  t.equal(res.status, 409, `${msg}: 409`);
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8', `${msg}: text/plain`);
  const lines = res.body.split('\n');
  t.ok(lines.length === 2 && lines[1] === '' && lines[0].includes(`rig ${id}`) && why.test(lines[0]), `${msg}: one line naming the id and why: "${lines[0]}"`);
  t.notOk(res.body.includes(A), `${msg}: the bound address is not shown`);
}

test('while_online (default): another address is refused while the bound one reports, and takes the id over once it went silent', async (t) => {
  const s = await server('while_online');
  t.equal((await report(s, 'rig5', A, honest)).status, 200, 'rig5 registers from A');
  t.equal((await report(s, 'rigb', B, { rig_serial: 'SN-B' })).status, 200, 'B registers its own rig');
  const before = await stored(s);
  isRefusal(t, await report(s, 'rig5', B, evil), 'rig5', /bound to another VPN address/, 'B reporting as rig5');
  isRefusal(t, await report(s, 'RIG5', B, evil), 'rig5', /bound to another VPN address/, 'the id in other case');
  t.deepEqual(await stored(s), before, 'nothing of the refused reports is stored: state, address, history');
  t.deepEqual(before.vpn_address, A, 'rig5 keeps its address');

  // B's upload is filed under the rig bound to B, whatever B claimed to be.
  const up = await net.request('vpn', {
    url: `http://10.144.20.1:${s.server.info.port}/api/v1/rigs/upload?key=rig5/cap.sqlite&size=4`,
    headers: { host: VPN_HOST },
    localAddress: B,
  });
  t.equal(up.status, 200, 'B reserves an upload');
  const upload = await s.app.db.models.Upload.findByPk(JSON.parse(up.body).id as number);
  t.equal(upload?.rig_id, 'rigb', "filed under B's own rig, not rig5");

  await silence(s, 'rig5');
  t.equal((await report(s, 'rig5', B, evil)).status, 200, 'after A went silent for longer than offline_after_s, B takes rig5 over');
  const taken = await stored(s);
  t.deepEqual([taken.vpn_address, taken.bound, taken.reports], [B, B, before.reports + 1], 'rig5 is bound to B now');
  isRefusal(t, await report(s, 'rig5', A, honest), 'rig5', /reported within rigs\.offline_after_s \(3600 s\)/, 'A, back while B reports');
  t.deepEqual(await stored(s), taken, 'nothing of it is stored');
});

test('two addresses registering one new id at once: one of them owns it, the other is refused, nothing of its reports stored', async (t) => {
  const s = await server('while_online');
  const reqs: HttpRequest[] = Array.from({ length: 20 }, (_, i) => ({
    url: `http://10.144.20.1:${s.server.info.port}/api/v1/rigs/race1`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: `rig_serial=SN-${i % 2 ? 'B' : 'A'}`,
    localAddress: i % 2 ? B : A,
  }));
  const res = await net.requestAll('vpn', reqs);
  const rig = await s.app.rigs.get('race1');
  const winner = rig.bound_address;
  t.ok(winner === A || winner === B, `bound to one of them (${winner})`);
  const fromWinner = res.filter((_, i) => reqs[i].localAddress === winner).map((r) => r.status);
  const fromLoser = res.filter((_, i) => reqs[i].localAddress !== winner).map((r) => r.status);
  t.deepEqual([...new Set(fromWinner)], [200], "the owner's reports: all 200");
  t.deepEqual([...new Set(fromLoser)], [409], "the other's reports: all 409");
  const rows = await s.app.db.models.RigReport.findAll({ where: { rig_id: 'race1' }, attributes: ['peer_address', 'serial'] });
  t.deepEqual([rows.length, [...new Set(rows.map((r) => r.peer_address))]], [10, [winner]], "ten history rows, all the owner's");
  t.equal(rig.serial, winner === A ? 'SN-A' : 'SN-B', "the rig's state is the owner's");
});

test('strict: another address is refused even after the bound one went silent; an operator rebinds or forgets the id', async (t) => {
  const s = await server('strict');
  const env = { RIGD_DATA_DIR: s.config.data_dir, RIGD_RIGS_ADDRESS_BINDING: 'strict' };
  t.equal((await report(s, 'rig5', A, honest)).status, 200, 'rig5 registers from A');
  const before = await stored(s);
  await silence(s, 'rig5'); // no matter in strict mode
  const silent = await stored(s);
  isRefusal(t, await report(s, 'rig5', B, evil), 'rig5', /rigd rigs rebind/, 'B reporting as rig5');
  t.deepEqual(await stored(s), silent, 'nothing stored');

  const rebind = await rigd(['rigs', 'rebind', 'rig5', B], { env });
  t.equal(rebind.code, 0, `rigd rigs rebind exits 0 ${rebind.stderr}`);
  t.match(rebind.stdout, /rig rig5 is bound to 10\.144\.20\.3/, 'says so');
  t.equal((await report(s, 'rig5', B, { ...honest, software_version: '3.2.0' })).status, 200, 'B reports as rig5 after the rebind');
  isRefusal(t, await report(s, 'rig5', A, honest), 'rig5', /bound to another/, 'A is refused now');
  t.equal((await stored(s)).reports, before.reports + 1, 'only the accepted report is stored');

  const forget = await rigd(['rigs', 'forget', 'rig5'], { env });
  t.equal(forget.code, 0, `rigd rigs forget exits 0 ${forget.stderr}`);
  t.equal((await s.app.rigs.get('rig5')).bound_address, null, 'unbound');
  t.equal((await report(s, 'rig5', A, honest)).status, 200, 'the next report binds it, from any address');
  t.equal((await stored(s)).bound, A, 'bound to A again');
  t.equal((await stored(s)).reports, before.reports + 2, 'history kept');
  isRefusal(t, await report(s, 'rig5', B, evil), 'rig5', /bound to another/, 'and B is refused again');

  const unknown = await rigd(['rigs', 'rebind', 'nosuchrig', B], { env });
  t.deepEqual([unknown.code, unknown.stderr.trim().split('\n').length], [1, 1], 'rebinding an unknown rig: exit 1, one line');
  t.match(unknown.stderr, /nosuchrig not found/, 'naming it');
  const badAddress = await rigd(['rigs', 'rebind', 'rig5', 'not-an-address'], { env });
  t.equal(badAddress.code, 1, 'a bad address: exit 1');
  t.match(badAddress.stderr, /address must be an IP address/, 'saying so');
  t.equal((await stored(s)).bound, A, 'the binding is unchanged');
  const mapped = await rigd(['rigs', 'rebind', 'rig5', `::ffff:${B}`], { env });
  t.match(mapped.stdout, /bound to 10\.144\.20\.3;/, 'an IPv4-mapped address is bound as its IPv4 address');
  t.equal((await report(s, 'rig5', B, honest)).status, 200, 'so B reports as rig5');
});

test('off: any address may report for any id (the id follows the last address)', async (t) => {
  const s = await server('off');
  t.equal((await report(s, 'rig5', A, honest)).status, 200, 'rig5 registers from A');
  t.equal((await report(s, 'rig5', B, evil)).status, 200, 'B reports as rig5');
  const now = await stored(s);
  t.deepEqual([now.vpn_address, now.bound, now.version, now.reports], [B, B, '6.6.6', 2], "today's behaviour: B's report is rig5's state");
});

test('teardown', async (t) => {
  for (const s of servers) await s.close();
  await net?.destroy();
  t.pass('closed');
});
