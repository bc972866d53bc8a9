// `--watch --json` as a child process: NDJSON change events while rigs report, uploads progress and
// captures queue; SIGINT or SIGTERM ends it with exit 0 and no partial line.
import test from 'tape';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { openApp, type App } from '../../src/services/app.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

interface Follower {
  /** Resolves with the first parsed line (from `from` on) that `ok` accepts. */
  next(ok: (event: Record<string, any>) => boolean, what: string): Promise<Record<string, any>>;
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Starts `rigd ARGS` and parses its stdout line by line. */
function follow(args: string[], env: Record<string, string>): Follower {
  const child = spawn(process.execPath, [RIGD, ...args], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let read = 0;
  const events: Record<string, any>[] = [];
  child.stdout.on('data', (d) => {
    stdout += d;
    const lines = stdout.split('\n');
    for (const line of lines.slice(read, -1)) events.push(JSON.parse(line));
    read = lines.length - 1;
  });
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  let seen = 0;
  return {
    async next(ok, what) {
      const end = Date.now() + 60_000;
      while (Date.now() < end) {
        const i = events.findIndex((e, n) => n >= seen && ok(e));
        if (i >= 0) {
          seen = i + 1;
          return events[i];
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no ${what} event; stdout:\n${stdout}\nstderr:\n${stderr}`);
    },
    async stop(signal) {
      child.kill(signal);
      const code = await exited;
      clearTimeout(killer);
      return { code, stdout, stderr };
    },
  };
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function checkLines(t: test.Test, stdout: string): void {
  t.ok(stdout.endsWith('\n'), 'the output ends with a whole line');
  const lines = stdout.trimEnd().split('\n');
  t.ok(lines.every((l) => { try { return typeof JSON.parse(l) === 'object'; } catch { return false; } }), `each of the ${lines.length} lines is one JSON object`);
  t.notOk(stdout.includes('\u001b['), 'no escape codes');
}

test('rigs --watch --json: a snapshot, then rig_appeared, reported, status_changed, came_online, in order; SIGINT exits 0', async (t) => {
  const config = testConfig();
  const env = { RIGD_DATA_DIR: config.data_dir };
  let app: App | undefined;
  try {
    app = await openApp(config);
    let at = Date.now();
    const rigs = new RigService(app.db, config, { now: () => new Date(at) });
    const report = (id: string, agoS: number) => {
      at = Date.now() - agoS * 1000;
      return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.5.5', software_version: '2.0', git_branch: 'main' }, '10.144.180.7');
    };
    await report('rig0', 10);
    const f = follow(['rigs', '--watch', '--json', '--interval', '0.2'], env);
    const first = await f.next(() => true, 'first');
    t.deepEqual([first.event, first.rig.id, first.rig.status], ['rig_appeared', 'rig0', 'online'], 'the first line: the existing rig appears (snapshot)');
    t.match(first.at, ISO, 'at: ISO 8601 UTC');
    const listed = JSON.parse((await rigd(['rigs', '--json'], { env })).stdout);
    const { online_since: _on, offline_since: _off, ...listedRig } = listed[0];
    t.deepEqual(first.rig, listedRig, 'the rig exactly as in rigd rigs --json (without online_since / offline_since)');
    t.match(first.rig.last_seen_at, ISO, 'its times too');

    await report('rig9', 3 * 3600);
    const appeared = await f.next((e) => e.rig?.id === 'rig9', 'rig9');
    t.deepEqual([appeared.event, appeared.rig.status], ['rig_appeared', 'offline'], 'a new rig: rig_appeared');
    await report('rig9', 0);
    const reported = await f.next((e) => e.rig?.id === 'rig9', 'rig9 report');
    t.equal(reported.event, 'reported', 'its report: reported');
    const changed = await f.next((e) => e.rig?.id === 'rig9', 'rig9 status');
    t.deepEqual([changed.event, changed.previous_status, changed.rig.status], ['status_changed', 'offline', 'online'], 'then status_changed with previous_status');
    const back = await f.next((e) => e.rig?.id === 'rig9', 'rig9 came_online');
    t.deepEqual([back.event, back.previous_status, back.rig.status], ['came_online', 'offline', 'online'], 'and came_online: it crossed from offline');

    const end = await f.stop('SIGINT');
    t.equal(end.code, 0, `SIGINT: exit 0 ${end.stderr}`);
    t.equal(end.stderr, '', 'nothing on stderr');
    checkLines(t, end.stdout);
    t.equal(end.stdout.trimEnd().split('\n').length, 5, 'nothing but these five events (rig0 unchanged)');

    const filtered = follow(['rigs', '--watch', '--json', '--interval', '0.2', '--status', 'online', '--branch', 'main'], env);
    const ids = [(await filtered.next(() => true, 'one')).rig.id, (await filtered.next(() => true, 'two')).rig.id];
    t.deepEqual(ids.sort(), ['rig0', 'rig9'], '--status and --branch filter the events');
    const term = await filtered.stop('SIGTERM');
    t.equal(term.code, 0, 'SIGTERM: exit 0');
    checkLines(t, term.stdout);
  } finally {
    await app?.close();
  }
});

test('uploads and captures --watch --json: appeared, progressed, state changed', async (t) => {
  const config = testConfig();
  const env = { RIGD_DATA_DIR: config.data_dir };
  const m = await rigd(['migrate'], { env });
  t.equal(m.code, 0, 'migrated');
  let app: App | undefined;
  try {
    const uploads = follow(['uploads', '--watch', '--json', '--interval', '0.2'], env);
    const captures = follow(['captures', '--watch', '--json', '--interval', '0.2'], env);
    app = await openApp(config);
    const r = await app.uploads.reserve({ key: 'rig1/a.sqlite', size: '100' }, '10.144.180.9');
    const appeared = await uploads.next(() => true, 'upload');
    t.deepEqual([appeared.event, appeared.upload.id, appeared.upload.state], ['upload_appeared', r.id, 'reserved'], 'upload_appeared');
    app.uploads.progress.set(r.id, 40);
    await app.uploads.progress.flush();
    const progressed = await uploads.next(() => true, 'progress');
    t.deepEqual([progressed.event, progressed.previous_bytes_seen, progressed.upload.bytes_seen], ['upload_progressed', 0, 40], 'upload_progressed');

    const store = app.storage;
    if (store.driver !== 'embedded') throw new Error('the embedded store');
    await store.ensureBucket();
    await store.putObject('rig1/a.sqlite', Readable.from([Buffer.alloc(100)]), { expectedSize: 100 });
    const info = await app.storage.stat('rig1/a.sqlite');
    await app.uploads.observe('rig1/a.sqlite', info!);
    const done = await uploads.next((e) => e.event === 'upload_state_changed', 'state');
    t.deepEqual([done.previous_state, done.upload.state], ['reserved', 'uploaded'], 'upload_state_changed with previous_state');
    const queued = await captures.next(() => true, 'capture');
    t.deepEqual([queued.event, queued.capture.key, queued.capture.state], ['capture_appeared', 'rig1/a.sqlite', 'queued'], 'the completed upload queues a capture: capture_appeared');

    for (const f of [uploads, captures]) {
      const end = await f.stop('SIGINT');
      t.equal(end.code, 0, `SIGINT: exit 0 ${end.stderr}`);
      checkLines(t, end.stdout);
    }
  } finally {
    await app?.close();
  }
});
