// No lockout by a stranger: 100 wrong passwords for one login from one client (a real VPN address in
// a network namespace) while the owner, at another address, logs in with the right password; an
// attack from several addresses only slows the owner down; `rigd user unlock` (a real CLI process)
// clears the login's failures. Every outcome is in the audit log with its client address.
import test from 'tape';
import { readAudit } from '../../src/services/audit/log.ts';
import { rigd } from '../helpers/cli.ts';
import { createHosts, type HttpRequest } from '../helpers/netns.ts';
import { startServer, userWithToken } from '../helpers/server.ts';

const statuses = (codes: number[]) => codes.reduce<Record<number, number>>((acc, c) => ({ ...acc, [c]: (acc[c] ?? 0) + 1 }), {});

test('100 wrong passwords from one client while the right password from another logs in; then unlock', async (t) => {
  const net = await createHosts([
    { name: 'attacker', addr: '10.144.28.2', gw: '10.144.28.1', extraAddrs: ['10.144.28.3', '10.144.28.4'] },
    { name: 'owner', addr: '10.144.29.2', gw: '10.144.29.1' },
  ]);
  const s = await startServer({ auth: { max_failures_per_login: 10, max_failures_per_client: 30, failure_window_s: 600, max_login_delay_s: 1 } }, { host: '::' });
  try {
    const port = s.server.info.port;
    const ana = await userWithToken(s, 'ana');
    const login = (from: 'attacker' | 'owner', password: string, localAddress?: string): HttpRequest => ({
      url: `http://${net.host(from).serverAddr}:${port}/api/v1/sessions`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'ana', password }),
      localAddress,
    });

    const [attack, owner] = await Promise.all([
      net.requestAll('attacker', Array.from({ length: 100 }, () => login('attacker', 'wrong-password')), { concurrency: 10 }),
      net.request('owner', login('owner', ana.password)),
    ]);
    t.deepEqual(statuses(attack.map((r) => r.status)), { 401: 10, 429: 90 }, 'the attacker: 10 x 401, then 429');
    t.equal(owner.status, 200, 'the owner, at another address, logs in meanwhile');
    t.ok(JSON.parse(owner.body).token, 'and gets a token');

    const refusedToAttacker = await net.request('attacker', login('attacker', ana.password));
    t.equal(refusedToAttacker.status, 429, 'the right password from the client that failed: still 429');
    t.ok(Number(refusedToAttacker.headers['retry-after']) > 0, 'with Retry-After');

    // Two more attacker addresses, 20 wrong passwords each: each is refused after its own 10.
    for (const addr of ['10.144.28.3', '10.144.28.4']) {
      const more = await net.requestAll('attacker', Array.from({ length: 20 }, () => login('attacker', 'wrong-password', addr)), { concurrency: 5 });
      t.deepEqual(statuses(more.map((r) => r.status)), { 401: 10, 429: 10 }, `${addr}: 10 x 401, 10 x 429`);
    }
    const slowed = await net.request('owner', login('owner', ana.password));
    t.equal(slowed.status, 200, 'under attack from three addresses the owner still logs in');

    const entries = await readAudit(s.app.db.reader, {});
    const failed = entries.filter((e) => e.kind === 'login.failed');
    t.equal(failed.length, 30, '30 failed logins on record (refusals are not failures)');
    t.deepEqual([...new Set(failed.map((e) => e.client))].sort(), ['10.144.28.2', '10.144.28.3', '10.144.28.4'], 'with the attacking addresses');
    const oks = entries.filter((e) => e.kind === 'login.ok' && e.client === '10.144.29.2');
    t.equal(oks.length, 2, "the owner's two logins on record with the owner's address");
    t.equal(oks[1]!.details.delay_ms, 1000, 'the second waited the full delay (1 s, auth.max_login_delay_s): slower, not refused');

    const unlock = await rigd(['user', 'unlock', 'ana'], { env: { RIGD_DATA_DIR: s.config.data_dir } });
    t.equal(unlock.code, 0, `rigd user unlock ana: exit 0 (${unlock.stderr.trim()})`);
    t.match(unlock.stdout, /unlocked ana: 30 failed logins cleared/, 'says how many failures it cleared');
    const after = await net.request('attacker', login('attacker', ana.password, '10.144.28.2'));
    t.equal(after.status, 200, 'after the unlock the right password logs in from the address that had failed');
    const unlocked = (await readAudit(s.app.db.reader, {})).find((e) => e.kind === 'user.unlock');
    t.equal(unlocked?.subject, 'ana', 'the unlock is on record');
    t.match(String(unlocked?.actor), /^cli:/, 'by the operator who ran it');

    const unknown = await rigd(['user', 'unlock', 'nobody'], { env: { RIGD_DATA_DIR: s.config.data_dir } });
    t.equal(unknown.code, 1, 'unlock of an unknown user: exit 1');
    t.match(unknown.stderr, /nobody/, 'naming it');
  } finally {
    await s.close();
    await net.destroy();
  }
});
