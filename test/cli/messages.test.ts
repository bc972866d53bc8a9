// test: shares tmux (the default tmux server)
// What the CLI says about captures, uploads and users, as a child process: an empty result names the
// filter it was asked with ("no uploads yet" only when there was none), counts read right ("1 table,
// 1 row"), an unknown capture is named by its id, a capture that has no rows says why and the next
// command to run (and that command, run through a shell as printed, works), user times name UTC.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { openApp } from '../../src/services/app.ts';
import { ROOT, RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { databaseEnvWord } from '../helpers/dialect.ts';
import { seedCapture } from '../helpers/seed-capture.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const dataDir = tmpDir();
const files = tmpDir();
const env = { RIGD_DATA_DIR: dataDir };
/** A rig-chosen key a shell needs quoted: a space and a single quote. */
const JUNK_KEY = "rig7/it's junk.sqlite";
let one = 0;
let failed = 0;

test('before anything exists: "no uploads yet", "no captures yet"; with a filter, the filter', async (t) => {
  const fresh = { RIGD_DATA_DIR: tmpDir() };
  t.equal((await rigd(['uploads'], { env: fresh })).stdout, 'no uploads yet\n', 'uploads: none at all');
  t.equal((await rigd(['captures'], { env: fresh })).stdout, 'no captures yet\n', 'captures: none at all');
  t.equal((await rigd(['uploads', '--state', 'reserved'], { env: fresh })).stdout, 'no uploads match --state reserved\n', 'uploads --state: named');
});

test('setup: an ingested capture of one table and one row, a failed capture, a reserved upload', async (t) => {
  const app = await openApp(testConfig({ data_dir: dataDir }));
  await app.start();
  one = await seedCapture(app, files, 'rig7/one.sqlite', [{ name: 'frames', columns: [{ name: 'seq', type: 'INTEGER' }], rows: [[1]] }]);
  writeFileSync(path.join(files, 'junk.sqlite'), 'no database here '.repeat(20));
  await putFile(app, JUNK_KEY, path.join(files, 'junk.sqlite'));
  const q = await app.captures.queueObject({ key: JUNK_KEY, url: app.storage.objectUrl(JUNK_KEY) });
  failed = (await settled(app, q.capture.id)).state === 'failed' ? q.capture.id : 0;
  await app.db.writes.run((transaction) =>
    app.db.models.Upload.create({ rig_id: 'rig7', peer_address: '10.144.170.7', key: 'rig7/next.sqlite', expected_size: 10, project: null, url_expires_at: new Date(Date.now() + 3600_000) }, { transaction }),
  );
  await app.close();
  t.ok(one > 0 && failed > 0, `capture ${one} ingested, capture ${failed} failed`);
});

test('empty results name the filter, quoted as typed in a shell', async (t) => {
  const uploads = await rigd(['uploads'], { env });
  t.match(uploads.stdout, /rig7\/next\.sqlite/, 'uploads: the reservation is listed');
  const expired = await rigd(['uploads', '--state', 'expired'], { env });
  t.deepEqual([expired.code, expired.stdout], [0, 'no uploads match --state expired\n'], 'uploads --state expired: the filter, not "yet"');
  const captures = await rigd(['captures'], { env });
  t.match(captures.stdout, /rig7\/one\.sqlite/, 'captures: listed');
  const ingesting = await rigd(['captures', '--state', 'ingesting', '--project', 'survey 2'], { env });
  t.deepEqual([ingesting.code, ingesting.stdout], [0, "no captures match --state ingesting --project 'survey 2'\n"], 'captures: every filter given, a value with a space quoted');
  t.equal((await rigd(['captures', '--rig', 'rig9'], { env })).stdout, 'no captures match --rig rig9\n', 'captures --rig');
});

/** The screen of a tmux session once `ok` holds (60 s at most: a busy machine starts node slowly). */
async function pane(session: string, ok: (text: string) => boolean, what: string): Promise<string> {
  const end = Date.now() + 60_000;
  let text = '';
  while (Date.now() < end) {
    text = execFileSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' });
    if (ok(text)) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`pane never showed ${what}:\n${text}`);
}

test('--watch on a terminal (tmux): an empty view names the filter too', async (t) => {
  for (const [args, said] of [
    ['uploads --watch --state expired', 'no uploads match --state expired'],
    ['captures --watch --rig rig9', 'no captures match --rig rig9'],
  ]) {
    const session = `rigd-messages-${process.pid}`;
    const command = `cd ${ROOT} && env -u CI -u RIGD_DATABASE_URL RIGD_DATA_DIR=${dataDir} ${databaseEnvWord(dataDir)} ${process.execPath} ${RIGD} ${args} --interval 0.5; echo "rigd exited $?"; sleep 30`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '120', '-y', '20', command]);
    try {
      const screen = await pane(session, (s) => /^updated /m.test(s), 'the view');
      t.ok(screen.split('\n').includes(said), `rigd ${args}: "${said}"`);
      execFileSync('tmux', ['send-keys', '-t', session, 'q']);
      t.match(await pane(session, (s) => s.includes('rigd exited'), 'the exit'), /rigd exited 0/, 'q quits with exit 0');
    } finally {
      try {
        execFileSync('tmux', ['kill-session', '-t', session]);
      } catch {
        // already gone
      }
    }
  }
});

test('counts in the right number: "1 table, 1 row"', async (t) => {
  const list = await rigd(['captures', '--state', 'ingested'], { env });
  t.match(list.stdout, /rig7\/one\.sqlite .* 1 table, 1 row\n/, `captures: the result column (${list.stdout.trim().split('\n').pop()})`);
  t.notOk(/1 tables|1 rows/.test(list.stdout), 'never "1 tables" or "1 rows"');
  const show = await rigd(['captures', 'show', String(one)], { env });
  t.match(show.stdout, /\ntables \(1, 1 row\)\n/, 'captures show: the tables heading');
});

test('an unknown capture is named by its id', async (t) => {
  for (const args of [['captures', 'show', '424242'], ['captures', 'export', '424242', 'frames']]) {
    const res = await rigd(args, { env });
    t.deepEqual([res.code, res.stdout, res.stderr], [1, '', 'rigd: capture 424242 not found\n'], `${args.join(' ')}: "capture 424242 not found"`);
  }
});

test('a capture without rows says why, and the command it names queues it again', async (t) => {
  const quoted = `'rig7/it'\\''s junk.sqlite'`;
  const res = await rigd(['captures', 'export', String(failed), 'frames'], { env });
  t.equal(res.code, 1, 'export of a failed capture: exit 1');
  t.match(
    res.stderr,
    new RegExp(`^rigd: capture ${failed} failed \\(not_sqlite\\): [^\\n]*[^.]; rigd ingest ${quoted.replace(/[\\'().]/g, '\\$&')} queues it again\\n$`),
    `one sentence: what failed, why, what to run (${res.stderr.trim()})`,
  );
  const show = await rigd(['captures', 'show', String(failed)], { env });
  t.ok(show.stdout.endsWith(`\ntables: none, its ingestion failed; rigd ingest ${quoted} queues it again\n`), 'captures show says the same about its tables');

  // The command exactly as printed, through a shell: it must parse back to the key.
  const command = /; (rigd ingest .*) queues it again$/.exec(res.stderr.trim())?.[1] ?? 'false';
  execFileSync('sh', ['-c', command.replace(/^rigd /, `"${process.execPath}" "${RIGD}" `)], { env: rigdEnv(env), stdio: 'ignore' });
  const again = JSON.parse((await rigd(['captures', 'show', String(failed), '--json'], { env })).stdout);
  t.equal(again.state, 'queued', `${command}: the same capture is queued again`);
  const queued = await rigd(['captures', 'export', String(failed), 'frames'], { env });
  t.equal(queued.stderr, `rigd: capture ${failed} is queued for ingestion and has no rows to read yet\n`, 'queued: says so, no command to run');
});

test('rigd user list: times name their zone (UTC), whatever the local zone', async (t) => {
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `user add (${add.stderr.trim()})`);
  const json = JSON.parse((await rigd(['user', 'list', '--json'], { env })).stdout) as { created_at: string }[];
  const list = await rigd(['user', 'list'], { env: { ...env, TZ: 'Asia/Kolkata' } });
  const expected = `${json[0]!.created_at.slice(0, 16).replace('T', ' ')} UTC`;
  t.match(list.stdout, /^ID\s+USERNAME\s+EMAIL\s+ADMIN\s+CREATED\n/, 'the header');
  t.ok(list.stdout.split('\n')[1]!.trimEnd().endsWith(`  ${expected}`), `CREATED is "${expected}" (TZ=Asia/Kolkata)`);
});
