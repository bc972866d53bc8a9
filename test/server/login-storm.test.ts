// test: alone (a login storm; reports bounded to 10 s)
// Password hashing runs on its own bounded pool: a storm of logins neither starves the database
// (bcrypt and sqlite3 share libuv's thread pool) nor grows without bound. Real HTTP over sockets.
// Rig reports come from loopback here, with vpn.cidr 127.0.0.0/8 so that loopback passes the VPN
// rule: what is tested is the thread pool, not the network.
import { execFileSync } from 'node:child_process';
import test from 'tape';
import { http, type HttpResponse } from '../helpers/http.ts';
import { startServer, userWithToken } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const STORM = 150;
const FORM = { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' };

interface Storm {
  sent: number;
  failed: string[];
  stored: number;
  /** The most logins answered while one report was in flight. */
  most: number;
  slowestMs: number;
  answers: HttpResponse[];
}

/** 150 logins at once, and one report after another until they are all answered. */
async function storm(s: Awaited<ReturnType<typeof startServer>>, round: number): Promise<Storm> {
  const { RigReport } = s.app.db.models;
  const report = (id: string) => http(`${s.url}/api/v1/rigs/${id}`, { method: 'PUT', headers: FORM, body: `rig_serial=${id}` });
  const rowsBefore = await RigReport.count();
  let answered = 0;
  const logins = Array.from({ length: STORM }, (_, i) =>
    http(`${s.url}/api/v1/sessions`, { json: { login: `storm${round}-${i}`, password: 'wrong-password' } }).finally(() => answered++),
  );
  // One report after another until the storm is over: each must be answered while the logins wait.
  const waited: number[] = [];
  const failed: string[] = [];
  let slowestMs = 0;
  let sent = 0;
  while (answered < STORM && sent < 1000) {
    const before = answered;
    const started = Date.now();
    const res = await report(`storm${round}-rig-${sent++}`);
    slowestMs = Math.max(slowestMs, Date.now() - started);
    waited.push(answered - before);
    if (res.status !== 200 || res.text !== 'Ok') failed.push(`${res.status} ${res.text}`);
  }
  const answers = await Promise.all(logins);
  return { sent, failed, stored: (await RigReport.count()) - rowsBefore, most: Math.max(...waited), slowestMs, answers };
}

test('rig reports are answered and stored all through a storm of 150 logins for distinct names', async (t) => {
  // A real work factor: the storm lasts seconds. Uncapped, bcrypt fills libuv's queue and a report
  // waits behind much of the storm (measured: single reports waited while 48 to 99 of the 150
  // logins were answered; with the pool, at most 20).
  // The data_dir on a tmpfs of its own: what is measured is the thread pool, not a disk that other
  // work on the machine keeps busy (a checkpoint's fsync stalled behind it holds one report for seconds).
  const dataDir = tmpDir('rigd-login-storm-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m,mode=0755', 'tmpfs', dataDir]);
  const s = await startServer({
    data_dir: dataDir,
    vpn: { cidr: '127.0.0.0/8' },
    // Up to 5,500 rig ids from one address: past the default bound on new ids per address (not what is measured here).
    rigs: { new_ids_per_address_per_hour: 10_000 },
    auth: { bcrypt_cost: 9, max_failures_per_login: 1000, max_failures_per_client: 1000 },
  });
  try {
    // Warm: the first report and the timing equaliser's hash are not what is measured.
    t.equal((await http(`${s.url}/api/v1/rigs/warm`, { method: 'PUT', headers: FORM, body: 'rig_serial=warm' })).status, 200, 'warm-up report');
    t.equal((await http(`${s.url}/api/v1/sessions`, { json: { login: 'warm', password: 'wrong-password' } })).status, 401, 'warm-up login');
    // Starving is systematic (every storm, the first report waits behind the queued hashes); a
    // machine busy with other work can hold one report back now and then while the pool's threads
    // keep hashing (they get CPU time apart from the event loop's). So a storm whose slowest report
    // waited for the storm is measured again, up to five storms, and the bound holds when it holds
    // in one of them; every storm is reported.
    const runs: Storm[] = [];
    const starved = (r: Storm) => r.sent < 5 || r.most >= STORM / 5;
    while (runs.length < 5 && (runs.length === 0 || starved(runs.at(-1)!))) runs.push(await storm(s, runs.length + 1));
    const said = runs.map((r, i) => `storm ${i + 1}: ${r.sent} reports, at most ${r.most} of ${STORM} logins answered while one was in flight, slowest ${r.slowestMs} ms`).join('; ');
    t.comment(said);
    for (const [i, r] of runs.entries()) {
      t.deepEqual(r.failed, [], `storm ${i + 1}: ${r.sent} reports during the storm, every one 200 Ok`);
      t.equal(r.stored, r.sent, `storm ${i + 1}: every report is stored`);
      t.deepEqual(
        [...new Set(r.answers.map((a) => `${a.status} ${a.json().error?.code}`))],
        ['401 invalid_credentials'],
        `storm ${i + 1}: every login was queued and answered 401, none refused`,
      );
    }
    t.ok(runs.some((r) => !starved(r)), `no report waited for the storm, and reports ran all through it (at least 5): ${said}`);
    const stats = s.app.passwords.stats();
    t.deepEqual([stats.running, stats.queued, stats.refused], [0, 0, 0], 'the pool is idle again and refused nothing');
  } finally {
    await s.close();
    execFileSync('umount', ['-l', dataDir]);
  }
});

test('past max_queued_hashes, logins get 429 login_busy with Retry-After, and are not counted as failures', async (t) => {
  const s = await startServer({
    auth: { bcrypt_cost: 10, hash_concurrency: 1, max_queued_hashes: 3, max_failures_per_login: 1000, max_failures_per_client: 30 },
  });
  try {
    const ana = await userWithToken(s, 'ana');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => http(`${s.url}/api/v1/sessions`, { json: { login: `busy${i}`, password: 'wrong-password' } })),
    );
    const wrong = answers.filter((r) => r.status === 401).length;
    const busy = answers.filter((r) => r.status === 429);
    t.equal(wrong + busy.length, 20, `every login answered 401 (${wrong}) or 429 (${busy.length})`);
    t.ok(wrong >= 4, 'at least the running and the queued ones were hashed');
    t.ok(busy.length > 0, 'some were refused at once');
    t.ok(busy.every((r) => r.json().error.code === 'login_busy'), 'refused with code login_busy');
    t.ok(busy.every((r) => Number(r.headers['retry-after']) >= 1), 'with Retry-After');
    t.equal(s.app.passwords.stats().refused, busy.length, 'the pool counted the refusals');
    // Only the hashed ones count against the client: 30 - wrong more failures, then 429.
    for (let i = wrong; i < 30; i++) {
      const res = await http(`${s.url}/api/v1/sessions`, { json: { login: `after${i}`, password: 'wrong-password' } });
      if (res.status !== 401) {
        t.fail(`failure ${i + 1} of 30 answered ${res.status}`);
        return;
      }
    }
    const last = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
    t.deepEqual([last.status, last.json().error.code], [429, 'too_many_requests'], 'the 31st attempt from the client: throttled');
  } finally {
    await s.close();
  }
});
