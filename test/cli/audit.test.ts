// The audit log through real rigd processes: what lands in it (users, logins from a namespace
// address, session revocation, ingest, backup), `rigd audit` in its forms, and `rigd audit verify`
// finding an edited entry, a removed one and a removed last one; retention keeps the chain
// verifiable; two processes appending at once keep one valid chain (both engines).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { once } from 'node:events';
import test from 'tape';
import { verifyChain } from '../../src/services/audit/chain.ts';
import { appendAudit, readAudit } from '../../src/services/audit/log.ts';
import { pruneAudit } from '../../src/services/audit/retention.ts';
import { existsSync } from 'node:fs';
import { makeCapture } from '../helpers/capture-files.ts';
import { ROOT, rigd, rigdEnv } from '../helpers/cli.ts';
import { put } from '../helpers/data-dir-captures.ts';
import { databaseUrlFor, onPostgres, withDatabase } from '../helpers/dialect.ts';
import { createHosts } from '../helpers/netns.ts';
import { startServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const DAY = 86_400_000;

/** A data_dir whose audit log holds a few entries made by real commands. */
async function dataDirWithEntries(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = tmpDir();
  const env = { RIGD_DATA_DIR: dir };
  for (const args of [
    ['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'],
    ['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'],
    ['user', 'set', 'bob', '--admin'],
    ['user', 'passwd', 'ana', '--password-stdin'],
    ['user', 'remove', 'bob'],
  ]) {
    const r = await rigd(args, { env, input: 'a-long-password\n' });
    if (r.code !== 0) throw new Error(`rigd ${args.join(' ')}: ${r.stderr}`);
  }
  return { dir, env };
}

test('operator actions and logins land in the audit log; rigd audit lists them; verify passes', async (t) => {
  const { dir, env } = await dataDirWithEntries();
  const set = await rigd(['user', 'set', 'ana', '--email', 'ana@new.example', '--json'], { env });
  t.equal(set.code, 0, `rigd user set --email: exit 0 (${set.stderr.trim()})`);
  t.equal(JSON.parse(set.stdout).email, 'ana@new.example', 'the new email');
  const nothing = await rigd(['user', 'set', 'ana'], { env });
  t.equal(nothing.code, 1, 'rigd user set with nothing to change: exit 1');
  t.match(nothing.stderr, /nothing to change/, 'saying what to give');
  const clash = await rigd(['user', 'add', 'cy', '--email', 'cy@example.com', '--password-stdin'], { env, input: 'a-long-password\n' });
  t.equal(clash.code, 0);
  const taken = await rigd(['user', 'set', 'cy', '--email', 'ANA@new.example'], { env });
  t.equal(taken.code, 1, 'an email another user has: exit 1');
  t.match(taken.stderr, /already used by ana/);

  const net = await createHosts([{ name: 'op', addr: '10.144.31.2', gw: '10.144.31.1' }]);
  const s = await startServer({ data_dir: dir }, { host: '::' });
  try {
    const url = `http://${net.host('op').serverAddr}:${s.server.info.port}/api/v1/sessions`;
    const json = { 'content-type': 'application/json' };
    const bad = await net.request('op', { url, method: 'POST', headers: json, body: JSON.stringify({ login: 'ana', password: 'nope-nope' }) });
    t.equal(bad.status, 401, 'a failed login');
    const ok = await net.request('op', { url, method: 'POST', headers: json, body: JSON.stringify({ login: 'ana', password: 'a-long-password' }) });
    t.equal(ok.status, 200, 'a login');
    const token = JSON.parse(ok.body).token as string;
    const out = await net.request('op', { url, method: 'DELETE', headers: { authorization: token } });
    t.equal(out.status, 200, 'the session revoked');
  } finally {
    await s.close();
    await net.destroy();
  }

  const list = await rigd(['audit', '--json'], { env });
  t.equal(list.code, 0, `rigd audit --json: exit 0 (${list.stderr.trim()})`);
  const entries = JSON.parse(list.stdout) as { seq: number; kind: string; actor: string; client: string | null; subject: string; details: Record<string, unknown> }[];
  t.deepEqual(
    entries.map((e) => `${e.kind} ${e.subject}`),
    ['user.add ana', 'user.add bob', 'user.set bob', 'user.passwd ana', 'user.remove bob', 'user.set ana', 'user.add cy', 'login.failed ana', 'login.ok ana', 'session.revoked ana'],
    'every action, in order',
  );
  t.deepEqual(entries.map((e) => e.seq), entries.map((_, i) => i + 1), 'seq 1..n');
  t.ok(entries.slice(0, 7).every((e) => /^cli:/.test(e.actor)), 'commands carry the operator (cli:USER)');
  t.deepEqual(entries[2]!.details, { admin: { from: false, to: true } }, 'user.set records old and new values');
  t.deepEqual(entries.slice(7).map((e) => e.client), ['10.144.31.2', '10.144.31.2', '10.144.31.2'], 'logins and the revocation carry the client address');

  const table = await rigd(['audit', '--since', '1h'], { env });
  t.equal(table.code, 0);
  t.match(table.stdout, /^SEQ\s+TIME \(UTC\)\s+KIND\s+ACTOR\s+CLIENT\s+SUBJECT\s+DETAILS\n/, 'a table');
  t.match(table.stdout, /login\.failed\s+10\.144\.31\.2\s+ana/, 'with the failed login and its address');
  const badSince = await rigd(['audit', '--since', 'yesterday'], { env });
  t.equal(badSince.code, 2, 'a bad --since: exit 2');

  const verify = await rigd(['audit', 'verify'], { env });
  t.equal(verify.code, 0, `rigd audit verify: exit 0 (${verify.stderr.trim()})`);
  t.match(verify.stdout, /audit log intact: 10 entries, head 10 [0-9a-f]{64}/, 'says the chain is intact and its head');
});

test('rigd audit verify finds an edited entry, a removed one and a removed last one (exit 1, naming it)', async (t) => {
  const edited = await dataDirWithEntries();
  await withDatabase(edited.dir, (db) => db.sequelize.query("UPDATE audit_log SET details = '{\"admin\":{\"from\":false,\"to\":false}}' WHERE seq = 3"));
  const one = await rigd(['audit', 'verify'], { env: edited.env });
  t.equal(one.code, 1, 'an edited entry: exit 1');
  t.match(one.stderr, /^rigd: audit log broken at entry 3: it was changed/, `names entry 3 (${one.stderr.trim()})`);

  const rehashed = await dataDirWithEntries();
  await withDatabase(rehashed.dir, async (db) => {
    // A careful forger also recomputes the edited entry's own hash: the next entry no longer follows it.
    const { sealAudit } = await import('../../src/services/audit/chain.ts');
    const [row] = await readAudit(db.reader, { afterSeq: 1, limit: 1 });
    const forged = { seq: row!.seq, at_ms: Date.parse(row!.at), kind: row!.kind, actor: 'cli:someone-else', client: row!.client, subject: row!.subject, details: JSON.stringify(row!.details), prev_hash: '' };
    const [raw] = await db.reader.all<{ prev_hash: string }>('SELECT prev_hash FROM audit_log WHERE seq = 2');
    forged.prev_hash = raw!.prev_hash;
    await db.sequelize.query('UPDATE audit_log SET actor = ?, hash = ? WHERE seq = 2', { replacements: [forged.actor, sealAudit(forged)] });
  });
  const two = await rigd(['audit', 'verify', '--json'], { env: rehashed.env });
  t.equal(two.code, 1, 'an edited entry with its hash recomputed: exit 1');
  t.equal(JSON.parse(two.stdout).broken.seq, 3, 'the entry after it is the first that no longer follows');

  const removed = await dataDirWithEntries();
  await withDatabase(removed.dir, (db) => db.sequelize.query('DELETE FROM audit_log WHERE seq = 2'));
  const three = await rigd(['audit', 'verify'], { env: removed.env });
  t.equal(three.code, 1, 'a removed entry: exit 1');
  t.match(three.stderr, /audit log broken at entry 2: it is missing/, `names entry 2 (${three.stderr.trim()})`);

  const tail = await dataDirWithEntries();
  await withDatabase(tail.dir, (db) => db.sequelize.query('DELETE FROM audit_log WHERE seq = 5'));
  const four = await rigd(['audit', 'verify'], { env: tail.env });
  t.equal(four.code, 1, 'the newest entry removed: exit 1');
  t.match(four.stderr, /entry 5: it is missing/, `names entry 5 (${four.stderr.trim()})`);
});

test('retention removes old entries and the chain stays verifiable from its anchor', async (t) => {
  const dir = tmpDir();
  await withDatabase(dir, async (db) => {
    const now = Date.now();
    for (let i = 0; i < 5; i++) await appendAudit(db, { kind: 'login.failed', client: '10.144.32.2', subject: `old${i}`, atMs: now - 400 * DAY + i });
    for (let i = 0; i < 3; i++) await appendAudit(db, { kind: 'login.ok', client: '10.144.32.2', subject: `new${i}`, atMs: now - DAY + i });
    t.equal(await pruneAudit(db, 365, now), 5, 'the 5 entries older than 365 days are removed');
    t.equal(await pruneAudit(db, 365, now), 0, 'a second sweep removes nothing');
    const left = await readAudit(db.reader, {});
    t.deepEqual(left.map((e) => e.subject ?? e.kind), ['new0', 'new1', 'new2', 'audit.pruned'], 'the rest, and a note of the pruning');
    t.deepEqual({ removed: left[3]!.details.removed, through_seq: left[3]!.details.through_seq }, { removed: 5, through_seq: 5 }, 'how many, through which entry');
    t.ok((await verifyChain(db.reader)).ok, 'the chain verifies from the anchor');
  });
  const verify = await rigd(['audit', 'verify'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(verify.code, 0, 'rigd audit verify: exit 0 after pruning');
  await withDatabase(dir, (db) => db.sequelize.query('DELETE FROM audit_log WHERE seq = 6'));
  const cut = await rigd(['audit', 'verify'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(cut.code, 1, 'the first entry after the anchor removed by hand: exit 1');
  t.match(cut.stderr, /entry 6: it is missing/, 'naming it');
});

test('rigd audit --follow --json prints new entries as NDJSON until stopped', async (t) => {
  const dir = tmpDir();
  await withDatabase(dir, (db) => appendAudit(db, { kind: 'backup', subject: '/tmp/first' }));
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'rigd'), 'audit', '--follow', '--json'], { env: rigdEnv({ RIGD_DATA_DIR: dir }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const lines = () => out.split('\n').filter(Boolean);
  const waitLines = async (n: number) => {
    const end = Date.now() + 60_000;
    while (Date.now() < end && lines().length < n) await new Promise((r) => setTimeout(r, 50));
  };
  child.stdout.on('data', (d) => (out += d));
  try {
    await waitLines(1);
    await withDatabase(dir, async (db) => {
      await appendAudit(db, { kind: 'restore', subject: '/tmp/second' });
      await appendAudit(db, { kind: 'user.unlock', subject: 'ana', details: { failures_cleared: 3 } });
    });
    await waitLines(3);
    const parsed = lines().map((l) => JSON.parse(l) as { seq: number; kind: string });
    t.deepEqual(parsed.map((e) => [e.seq, e.kind]), [[1, 'backup'], [2, 'restore'], [3, 'user.unlock']], 'the existing entry, then each new one, one JSON object per line');
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0, 'SIGTERM ends it with exit 0');
});

test('rigd ingest and rigd backup are on record', async (t) => {
  const dir = tmpDir();
  const env = { RIGD_DATA_DIR: dir };
  const file = path.join(tmpDir(), 'c.sqlite');
  await makeCapture(file);
  await put(dir, 'rig3/c.sqlite', file);
  const queued = await rigd(['ingest', 'rig3/c.sqlite'], { env });
  t.equal(queued.code, 0, `rigd ingest: exit 0 (${queued.stderr.trim()})`);
  const missing = await rigd(['ingest', 'rig3/none.sqlite'], { env });
  t.notEqual(missing.code, 0, 'an ingest of a missing object fails');
  const target = path.join(tmpDir(), 'backup.file');
  const backup = await rigd(['backup', target], { env, timeoutMs: 60_000 });
  t.equal(backup.code, 0, `rigd backup: exit 0 (${backup.stderr.trim()})`);
  t.ok(existsSync(target), 'the backup was written');
  const entries = await withDatabase(dir, (db) => readAudit(db.reader, {}));
  const ingest = entries.find((e) => e.kind === 'ingest.triggered');
  t.equal(ingest?.subject, 'rig3/c.sqlite', 'ingest.triggered names the key');
  t.equal(ingest?.details.queued, true, 'and that it was queued');
  t.match(String(ingest?.actor), /^cli:/, 'by the operator');
  const backedUp = entries.find((e) => e.kind === 'backup');
  t.ok(backedUp?.subject?.endsWith('backup.file'), 'backup names the file');
  t.equal(backedUp?.details.engine, onPostgres ? 'postgres' : 'sqlite', 'and the engine');
  t.equal(entries.filter((e) => e.kind === 'ingest.triggered').length, 1, 'the failed ingest is no entry (nothing was triggered)');
});

test('two processes appending at once keep one valid chain', async (t) => {
  const dir = tmpDir();
  await withDatabase(dir, async () => undefined);
  const url = databaseUrlFor(dir);
  const start = (label: string) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'helpers', 'audit-append.ts'), dir, '150', label], {
      cwd: ROOT,
      env: { ...process.env, RIGD_DATABASE_URL: url },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const until = async (text: string) => {
      const end = Date.now() + 120_000;
      while (Date.now() < end && !out.includes(text)) await new Promise((r) => setTimeout(r, 50));
      return out;
    };
    return { child, until };
  };
  const a = start('a');
  const b = start('b');
  await Promise.all([a.until('ready'), b.until('ready')]);
  a.child.stdin!.end('go\n');
  b.child.stdin!.end('go\n');
  const [outA, outB] = await Promise.all([a.until('done'), b.until('done')]);
  t.match(outA, /done 150/, 'process a appended 150');
  t.match(outB, /done 150/, 'process b appended 150');
  await withDatabase(dir, async (db) => {
    const entries = await readAudit(db.reader, {});
    t.equal(entries.length, 300, '300 entries');
    t.deepEqual(entries.map((e) => e.seq), Array.from({ length: 300 }, (_, i) => i + 1), 'seq 1..300, no gap, no repeat');
    const firstB = entries.findIndex((e) => e.details.process === 'b');
    const lastA = entries.map((e) => e.details.process).lastIndexOf('a');
    const firstA = entries.findIndex((e) => e.details.process === 'a');
    const lastB = entries.map((e) => e.details.process).lastIndexOf('b');
    t.ok(firstB < lastA && firstA < lastB, 'the two processes interleaved (each one appended after the other had begun)');
  });
  const verify = await rigd(['audit', 'verify'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(verify.code, 0, `rigd audit verify: exit 0 (${verify.stderr.trim()})`);
  t.match(verify.stdout, /300 entries/);
});

test('rigd audit --since 1h --follow --json shows no older entry, even when none is in the window at start', async (t) => {
  const dir = tmpDir();
  await withDatabase(dir, async (db) => {
    await appendAudit(db, { kind: 'backup', subject: '/tmp/old' });
    await db.sequelize.query('UPDATE audit_log SET at_ms = at_ms - ?', { replacements: [2 * DAY] });
  });
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'rigd'), 'audit', '--since', '1h', '--follow', '--json'], { env: rigdEnv({ RIGD_DATA_DIR: dir }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const lines = () => out.split('\n').filter(Boolean);
  try {
    // The follower has started reading once it has printed nothing for a few polls; then a new entry.
    await new Promise((r) => setTimeout(r, 3000));
    await withDatabase(dir, (db) => appendAudit(db, { kind: 'restore', subject: '/tmp/new' }));
    const end = Date.now() + 60_000;
    while (Date.now() < end && !out.includes('/tmp/new')) await new Promise((r) => setTimeout(r, 50));
    const parsed = lines().map((l) => JSON.parse(l) as { seq: number; subject: string });
    t.deepEqual(parsed.map((e) => [e.seq, e.subject]), [[2, '/tmp/new']], `only the new entry (stderr: ${err.trim()})`);
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0, 'SIGTERM ends it with exit 0');
});
