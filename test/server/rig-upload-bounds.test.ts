// test: alone (a tmpfs filled)
// A key belongs to its rig, and bounds per rig keep one rig from filling the gateway: rigs at real
// VPN addresses (network namespaces) reserve and PUT through the embedded store; another rig asking
// for an owned key gets 403 key_owned; new ids per address, open reservations and bytes per day
// answer 429 with Retry-After; a reservation past the free-space floor (a tmpfs the test mounts)
// answers 507 before any byte is sent; rig reports are answered all along.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { createHosts, type Hosts, type HttpResponse } from '../helpers/netns.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const GW = '10.144.22.1';
const A = '10.144.22.2';
const B = '10.144.22.3';
const C = '10.144.22.4';
let net: Hosts;
const servers: TestServer[] = [];
const mounts: string[] = [];
const files = tmpDir();

const setup = fixture(async () => {
  net = await createHosts([{ name: 'vpn', addr: A, gw: GW, extraAddrs: [B, C] }]);
});

async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  await setup();
  const port = await closedPort();
  const s = await startServer({ ...overrides, server: { port, ...overrides.server }, storage: { ...overrides.storage, public_url: `http://${GW}:${port}` } }, { host: '0.0.0.0', port });
  servers.push(s);
  return s;
}

function at(s: TestServer, from: string, pathAndQuery: string, init: { method?: string; body?: string } = {}): Promise<HttpResponse> {
  return net.request('vpn', {
    url: `http://${GW}:${s.server.info.port}${pathAndQuery}`,
    method: init.method ?? 'GET',
    headers: { host: 'vpn.rigs.internal', ...(init.body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(init.body !== undefined ? { body: init.body } : {}),
    localAddress: from,
  });
}

const report = (s: TestServer, id: string, from: string) => at(s, from, `/api/v1/rigs/${id}`, { method: 'PUT', body: `rig_serial=SN-${id}` });
const reserve = (s: TestServer, from: string, key: string, size: number) => at(s, from, `/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=${size}`);

async function put(from: string, url: string, content: Buffer): Promise<number> {
  const file = path.join(files, `put-${Date.now()}-${Math.random()}`);
  writeFileSync(file, content);
  const res = await net.curl('vpn', ['--interface', from, '-X', 'PUT', '-T', file, url]);
  return res.status;
}

function jsonError(res: HttpResponse): { code: string; message: string } {
  return (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
}

test('a key belongs to the first rig to reserve it: another rig gets 403 key_owned; the owner may overwrite its own object', async (t) => {
  const s = await server();
  t.equal((await report(s, 'rig2', A)).status, 200, 'rig2 reports from A');
  t.equal((await report(s, 'rig3', B)).status, 200, 'rig3 reports from B');
  const mine = Buffer.from('rig2 capture v1');
  const first = await reserve(s, A, 'rig2/cap.sqlite', mine.length);
  t.equal(first.status, 200, 'rig2 reserves its key');
  t.equal(await put(A, JSON.parse(first.body).url as string, mine), 200, 'and uploads it');

  const taken = await reserve(s, B, 'rig2/cap.sqlite', 5);
  t.equal(taken.status, 403, 'rig3 asking for the same key: 403');
  t.equal(taken.headers['content-type'], 'application/json; charset=utf-8', 'JSON');
  t.deepEqual([JSON.parse(taken.body).success, jsonError(taken).code], [false, 'key_owned'], 'error code key_owned');
  t.notOk(taken.body.includes('rig2"') || taken.body.includes(A), 'the owner is not named');
  const kept = await s.app.storage.stat('rig2/cap.sqlite');
  t.equal(kept?.size, mine.length, "rig2's object is untouched");
  t.equal(await s.app.db.models.Upload.count({ where: { key: 'rig2/cap.sqlite' } }), 1, 'no reservation stored for rig3');

  const again = await reserve(s, A, 'rig2/cap.sqlite', 15);
  t.equal(again.status, 200, 'rig2 may reserve its own key again (to overwrite it)');
  t.equal(JSON.parse(again.body).exists, true, 'exists: true, as the seed says');
  t.equal(await put(A, JSON.parse(again.body).url as string, Buffer.from('rig2 capture v2')), 200, 'and overwrite it');

  // A claim that was never used (no object, no open reservation) passes on.
  t.equal((await reserve(s, A, 'shared/name.sqlite', 4)).status, 200, 'A reserves a key it never uploads');
  t.equal((await reserve(s, B, 'shared/name.sqlite', 4)).status, 403, 'B is refused while that reservation is open');
  // A's URL runs out (as the upload monitor finds it 900 s later).
  await s.app.db.models.Upload.update({ state: 'expired', url_expires_at: new Date(Date.now() - 1000) }, { where: { key: 'shared/name.sqlite' } });
  t.equal((await reserve(s, B, 'shared/name.sqlite', 4)).status, 200, 'once it expired unused, B may take the key');
  t.equal((await reserve(s, A, 'shared/name.sqlite', 4)).status, 403, 'and A is refused now (B holds an open reservation)');
});

test('bounds per rig: new ids per address per hour, open reservations, bytes per day: 429 with Retry-After; reports still answered', async (t) => {
  const s = await server({ rigs: { new_ids_per_address_per_hour: 2 }, uploads: { open_per_rig: 3, bytes_per_rig_per_day: 1000 } });
  t.equal((await report(s, 'c1', C)).status, 200, 'C registers its first id');
  t.equal((await report(s, 'c2', C)).status, 200, 'and its second');
  const third = await report(s, 'c3', C);
  t.equal(third.status, 429, 'a third new id from C within the hour: 429');
  t.equal(third.headers['content-type'], 'text/plain; charset=utf-8', 'text/plain, as the report route answers');
  const retry = Number(third.headers['retry-after']);
  t.ok(retry > 3000 && retry <= 3600, `Retry-After until the oldest registration leaves the hour (${retry} s)`);
  t.match(third.body, /^rig c3 not registered: .*rigs\.new_ids_per_address_per_hour\)\n$/, 'one line naming the id and the bound');
  t.equal(await s.app.db.models.Rig.count({ where: { id: 'c3' } }), 0, 'c3 is not stored');
  t.equal((await report(s, 'c1', C)).status, 200, "C's registered rigs still report");
  t.equal((await report(s, 'ra', A)).status, 200, 'another address registers its id');

  for (let i = 0; i < 3; i++) t.equal((await reserve(s, A, `ra/open-${i}.sqlite`, 10)).status, 200, `ra's reservation ${i + 1} of 3`);
  const open = await reserve(s, A, 'ra/open-3.sqlite', 10);
  t.equal(open.status, 429, 'a fourth open reservation: 429');
  t.equal(jsonError(open).code, 'too_many_reservations', 'code too_many_reservations (JSON, as the upload route answers)');
  const openRetry = Number(open.headers['retry-after']);
  t.ok(openRetry >= 1 && openRetry <= 900, `Retry-After: when the oldest URL expires (${openRetry} s)`);
  t.equal((await report(s, 'ra', A)).status, 200, 'ra still reports');

  t.equal((await report(s, 'rb', B)).status, 200, 'rb registers from B');
  t.equal((await reserve(s, B, 'rb/one.sqlite', 600)).status, 200, 'rb is not held back by ra: 600 bytes');
  const bytes = await reserve(s, B, 'rb/two.sqlite', 500);
  t.equal(bytes.status, 429, '500 more bytes within the day: 429');
  t.equal(jsonError(bytes).code, 'too_many_bytes', 'code too_many_bytes');
  const bytesRetry = Number(bytes.headers['retry-after']);
  t.ok(bytesRetry > 80_000 && bytesRetry <= 86_400, `Retry-After: when the day's first reservation leaves the window (${bytesRetry} s)`);
  t.equal((await reserve(s, B, 'rb/three.sqlite', 400)).status, 200, 'what still fits is accepted');
  t.equal(await s.app.db.models.Upload.count({ where: { rig_id: 'rb' } }), 2, 'refused reservations are not stored');
});

test('the free-space floor: a reservation that would leave less than min_free_mb + database_reserve_mb is refused (507) before any byte; reports are answered', async (t) => {
  // data_dir on a tmpfs of 32 MiB; the floor is 4 + 4 MiB.
  const dir = tmpDir('rigd-floor-');
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir]);
  mounts.push(dir);
  const s = await server({ data_dir: dir, server: { min_free_mb: 4 }, uploads: { database_reserve_mb: 4 }, storage: { max_upload_size: 64 * 1024 * 1024 } } as never);
  t.equal((await report(s, 'rf', A)).status, 200, 'rf reports');
  const MiB = 1024 * 1024;
  t.equal((await reserve(s, A, 'rf/big-1.sqlite', 12 * MiB)).status, 200, '12 MiB of 32: accepted');
  const full = await reserve(s, A, 'rf/big-2.sqlite', 12 * MiB);
  t.equal(full.status, 507, '12 MiB more would leave under 8 MiB: 507');
  t.equal(full.headers['content-type'], 'application/json; charset=utf-8', 'JSON, as the upload route answers');
  t.equal(jsonError(full).code, 'insufficient_storage', 'code insufficient_storage');
  t.match(jsonError(full).message, /keeps 8 MiB free/, 'says what it keeps');
  t.equal(await s.app.db.models.Upload.count({ where: { key: 'rf/big-2.sqlite' } }), 0, 'nothing stored');
  const reports = await Promise.all(Array.from({ length: 20 }, () => report(s, 'rf', A)));
  t.deepEqual([...new Set(reports.map((r) => r.status))], [200], '20 rig reports all answered 200');
  t.equal((await reserve(s, B, 'rb/small.sqlite', 1 * MiB)).status, 200, 'a reservation that fits is still accepted');

  // The disk fills after the reservation: its PUT is refused before a byte is stored (S3-style XML, as that route answers).
  const accepted = await reserve(s, A, 'rf/big-3.sqlite', 6 * MiB);
  t.equal(accepted.status, 200, 'a 6 MiB reservation is accepted');
  const body = path.join(files, 'six-mib');
  writeFileSync(body, Buffer.alloc(6 * MiB, 7));
  execFileSync('fallocate', ['-l', '20M', path.join(dir, 'filler')]);
  const refused = await net.curl('vpn', ['--interface', A, '-X', 'PUT', '-T', body, JSON.parse(accepted.body).url as string]);
  t.equal(refused.status, 507, 'with the disk filled by another 20 MiB, the PUT answers 507');
  t.match(refused.body, /<Code>XMinioStorageFull<\/Code>.*leave less than 8 MiB free/s, 'S3-style XML naming the floor');
  t.equal(await s.app.storage.stat('rf/big-3.sqlite'), null, 'nothing stored');
  t.equal((await report(s, 'rf', A)).status, 200, 'rig reports still answered');
  execFileSync('rm', [path.join(dir, 'filler')]);
  t.equal(await put(A, JSON.parse(accepted.body).url as string, Buffer.alloc(6 * MiB, 7)), 200, 'space back: the same URL stores the file');
});

test('teardown', async (t) => {
  for (const s of servers) await s.close();
  for (const dir of mounts) execFileSync('umount', [dir]);
  await net?.destroy();
  t.pass('closed');
});
