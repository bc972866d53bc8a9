// `rigd audit --client ADDRESS --kind KIND[,KIND]` through real rigd processes (both engines):
// entries from several client addresses (IPv4 and IPv6) and kinds, each filter alone and combined,
// with --since and --json, --follow printing only matching new entries, bad values refused (exit 2).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import test from 'tape';
import { appendAudit } from '../../src/services/audit/log.ts';
import { ROOT, rigd, rigdEnv } from '../helpers/cli.ts';
import { withDatabase } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const A = '10.144.219.2';
const A_PREFIX = '10.144.219.20';
const V6 = '2001:db8::1';
const HOUR = 3_600_000;

/** seq 1..7: an old refusal from A, then refusals, logins and an operator entry from several clients. */
async function seeded(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = tmpDir();
  await withDatabase(dir, async (db) => {
    await appendAudit(db, { kind: 'rig.refused', client: A, actor: 'rig:old', atMs: Date.now() - 3 * HOUR });
    await appendAudit(db, { kind: 'rig.refused', client: A, actor: 'rig:r1' });
    await appendAudit(db, { kind: 'key.refused', client: A, actor: 'rig:r2' });
    await appendAudit(db, { kind: 'rig.refused', client: A_PREFIX, actor: 'rig:r3' });
    await appendAudit(db, { kind: 'login.failed', client: V6, subject: 'ana' });
    await appendAudit(db, { kind: 'rig.refused', client: V6, actor: 'rig:r4' });
    await appendAudit(db, { kind: 'user.add', actor: 'cli:root', subject: 'bob' });
  });
  return { dir, env: { RIGD_DATA_DIR: dir } };
}

async function seqs(env: Record<string, string>, args: string[]): Promise<number[]> {
  const r = await rigd(['audit', ...args, '--json'], { env });
  if (r.code !== 0) throw new Error(`rigd audit ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { seq: number }[]).map((e) => e.seq);
}

test('rigd audit --client and --kind list only matching entries, alone, combined and with --since', async (t) => {
  const { env } = await seeded();
  t.deepEqual(await seqs(env, ['--client', A]), [1, 2, 3], '--client: exactly that address (not 10.144.219.20)');
  t.deepEqual(await seqs(env, ['--client', A_PREFIX]), [4], '--client of the longer address');
  t.deepEqual(await seqs(env, ['--client', V6]), [5, 6], 'an IPv6 address as recorded');
  t.deepEqual(await seqs(env, ['--client', '2001:0DB8:0:0::1']), [5, 6], 'an IPv6 address written another way finds the same entries');
  t.deepEqual(await seqs(env, ['--client', `::ffff:${A}`]), [1, 2, 3], 'an IPv4-mapped IPv6 address is the IPv4 address recorded');
  t.deepEqual(await seqs(env, ['--client', '10.144.219.99']), [], 'an address with no entries: none');
  t.deepEqual(await seqs(env, ['--kind', 'rig.refused']), [1, 2, 4, 6], '--kind: one kind');
  t.deepEqual(await seqs(env, ['--kind', 'key.refused,login.failed']), [3, 5], '--kind: a list');
  t.deepEqual(await seqs(env, ['--kind', 'custom.thing']), [], 'any area.what name is taken');
  t.deepEqual(await seqs(env, ['--client', A, '--kind', 'rig.refused']), [1, 2], 'both: entries matching both');
  t.deepEqual(await seqs(env, ['--since', '1h', '--client', A, '--kind', 'rig.refused']), [2], 'with --since: only the window');
  t.deepEqual(await seqs(env, ['--since', '1h', '--client', A, '--kind', 'rig.refused,key.refused']), [2, 3], 'the refusal incidents\' command, both kinds');

  const table = await rigd(['audit', '--client', V6, '--kind', 'login.failed'], { env });
  t.equal(table.code, 0, `the table: exit 0 (${table.stderr.trim()})`);
  t.match(table.stdout, /login\.failed/, 'the table lists the matching entry');
  t.doesNotMatch(table.stdout, /rig\.refused|user\.add/, 'and no other');
  const none = await rigd(['audit', '--since', '1h', '--client', '10.144.219.99'], { env });
  t.equal(none.code, 0, 'no match: exit 0');
  t.match(none.stdout, /no audit entries/, 'saying there are none');
});

test('rigd audit refuses a --client that is not an IP address and a --kind that is not a kind (exit 2, one line)', async (t) => {
  const { env } = await seeded();
  for (const [args, pattern] of [
    [['--client', 'rig01'], /--client must be an IP address.*"rig01"/],
    [['--client', '10.144.219.0/24'], /--client must be an IP address/],
    [['--client', "10.144.219.2' OR 1=1 --"], /--client must be an IP address/],
    [['--client', ''], /--client must be an IP address/],
    [['--kind', 'Rig.Refused'], /--kind must be .*"Rig\.Refused"/],
    [['--kind', 'rig.refused,'], /--kind must be/],
    [['--kind', "rig.refused') OR ('1'='1"], /--kind must be/],
    [['--kind', 'a'.repeat(65)], /--kind must be/],
    [['--kind', 'x\u001b[31m'], /--kind must be .*"x\?\[31m"/],
  ] as [string[], RegExp][]) {
    const r = await rigd(['audit', ...args], { env });
    t.equal(r.code, 2, `${JSON.stringify(args)}: exit 2`);
    t.match(r.stderr, pattern, `${JSON.stringify(args)}: saying what is wrong`);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    t.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    t.equal(r.stdout, '', 'nothing listed');
  }
});

test('rigd audit --follow --client --kind prints only matching new entries', async (t) => {
  const { dir } = await seeded();
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'rigd'), 'audit', '--follow', '--json', '--client', A, '--kind', 'rig.refused,key.refused'], {
    env: rigdEnv({ RIGD_DATA_DIR: dir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const lines = () => out.split('\n').filter(Boolean);
  const waitLines = async (n: number) => {
    const end = Date.now() + 60_000;
    while (Date.now() < end && lines().length < n) await new Promise((r) => setTimeout(r, 50));
  };
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  try {
    await waitLines(3);
    await withDatabase(dir, async (db) => {
      await appendAudit(db, { kind: 'rig.refused', client: A_PREFIX, actor: 'rig:x' });
      await appendAudit(db, { kind: 'login.ok', client: A, subject: 'ana' });
      await appendAudit(db, { kind: 'rig.refused', client: V6, actor: 'rig:y' });
      await appendAudit(db, { kind: 'key.refused', client: A, actor: 'rig:z' });
      // A last matching entry: once it is printed, the follower has read past everything above.
      await appendAudit(db, { kind: 'rig.refused', client: A, actor: 'rig:last' });
    });
    await waitLines(5);
    const parsed = lines().map((l) => JSON.parse(l) as { seq: number; kind: string; client: string });
    t.deepEqual(
      parsed.map((e) => [e.seq, e.kind, e.client]),
      [
        [1, 'rig.refused', A],
        [2, 'rig.refused', A],
        [3, 'key.refused', A],
        [11, 'key.refused', A],
        [12, 'rig.refused', A],
      ],
      'the matching entries there were, then only the matching new ones',
    );
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0, `SIGTERM ends it with exit 0 (${err.trim()})`);
});
