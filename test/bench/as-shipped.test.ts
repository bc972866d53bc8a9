// test: alone (runs five benches: rigd serve, Chromium and load of their own, netns 10.144.186-189)
// The benches that measure rigd as operators run it start and print what they ran, on a tiny run
// each (the figures themselves are not judged: a test never asserts a time or a rate): the command,
// the `bin/rigd serve` command line with the config keys they set (every other at its default),
// their figures, and memory read from the serving process (not bin/rigd's relaunching parent).
// rigd runs on its default database, SQLite in data_dir: SQLite only. Needs dist/ (npm run build),
// root, iproute2, curl, chromium; network namespaces on 10.144.186-189.0/24.
import test from 'tape';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../helpers/cli.ts';
import { sqliteOnly } from '../helpers/dialect.ts';

function bench(name: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, `bench/${name}.ts`)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...(process.env.RIGD_TEST_CHROMIUM ? { RIGD_TEST_CHROMIUM: process.env.RIGD_TEST_CHROMIUM } : {}), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** The command and rigd's command line; returns rigd's (bin/rigd's) pid. */
function started(t: test.Test, name: string, out: string, keys: string[]): number {
  t.match(out, new RegExp(`^command: node --import tsx bench/${name}\\.ts$`, 'm'), 'the command it ran');
  const rigd = /^rigd: {4}(.*) bin\/rigd serve --port \d+ \(pid (\d+); every other key at its default\)$/m.exec(out);
  t.ok(rigd, `bin/rigd serve as its own process, its config printed${rigd ? '' : `:\n${out.slice(-1500)}`}`);
  const set = (rigd?.[1] ?? '').split(' ').map((kv) => kv.slice(0, kv.indexOf('=')));
  t.deepEqual(set, ['RIGD_DATA_DIR', ...keys], `the keys set beside the defaults: ${['data_dir', ...keys].join(', ')}`);
  t.match(out, /^machine: 2 CPUs|^machine: \d+ CPUs/m, "the machine's CPUs and load");
  return Number(rigd?.[2]);
}

/** The RSS line names the serving process, which bin/rigd started as its child: another pid. */
function rssOfServe(t: test.Test, out: string, wrapper: number): void {
  const m = /RSS(?: of rigd serve)? \(pid (\d+)\)|rigd serve RSS \(pid (\d+)\)/.exec(out);
  t.ok(m, 'a memory figure of rigd serve');
  t.notEqual(Number(m?.[1] ?? m?.[2]), wrapper, "read from the process that serves, not bin/rigd's relaunching parent");
}

test('bench:map on 200 rigs: rigd serve seeded before it starts, the page from loopback', async (t) => {
  if (sqliteOnly(t, 'the bench runs rigd on its default database')) return;
  const { code, out } = await bench('map', { BENCH_RIGS: '200' });
  t.equal(code, 0, `it ran to its end, every marker drawn${code === 0 ? '' : `:\n${out.slice(-2000)}`}`);
  const pid = started(t, 'map', out, []);
  t.match(out, /first full render: \d+ ms from navigation start \(200 of 200 markers/, 'the first full render');
  rssOfServe(t, out, pid);
});

test('bench:login-storm on 5 logins: the rigs from a namespace, the logins from loopback', async (t) => {
  if (sqliteOnly(t, 'the bench runs rigd on its default database')) return;
  const { code, out } = await bench('login-storm', { BENCH_IDLE_S: '1', BENCH_LOGINS: '5', BENCH_BCRYPT_COST: '4', BENCH_CLIENTS: '2' });
  t.equal(code, 0, `it ran to its end, every report answered${code === 0 ? '' : `:\n${out.slice(-2000)}`}`);
  const pid = started(t, 'login-storm', out, ['RIGD_AUTH_MAX_FAILURES_PER_CLIENT', 'RIGD_RIGS_NEW_IDS_PER_ADDRESS_PER_HOUR', 'RIGD_AUTH_BCRYPT_COST']);
  t.match(out, /from 10\.144\.187\.2/, 'the rigs report from their namespace');
  t.match(out, /^login storm: \d+ reports in [0-9.]+ s: p50 [0-9.]+ ms {2}p99 [0-9.]+ ms .*no answer: 0\)$/m, 'reports during the storm, all answered');
  t.match(out, /the storm: 5 logins answered/, 'every login answered');
  rssOfServe(t, out, pid);
});

test('bench:uploads on a 5 MB PUT: reservations and PUTs from a namespace, the baselines in processes of their own', async (t) => {
  if (sqliteOnly(t, 'the bench runs rigd on its default database')) return;
  const { code, out } = await bench('uploads', { BENCH_DURATION: '1', BENCH_CONNECTIONS: '4', BENCH_PUT_MB: '5', BENCH_PUT_ROUNDS: '1' });
  t.equal(code, 0, `it ran to its end, reservations stored >= 2xx${code === 0 ? '' : `:\n${out.slice(-2000)}`}`);
  const pid = started(t, 'uploads', out, ['RIGD_STORAGE_PUBLIC_URL', 'RIGD_STORAGE_MAX_UPLOAD_SIZE', 'RIGD_UPLOADS_OPEN_PER_RIG', 'RIGD_UPLOADS_BYTES_PER_RIG_PER_DAY']);
  t.match(out, /bare hapi \(own process\): \d+ req\/s/, 'the bare route, in its own process');
  t.match(out, /rigd's route \(serve\) +: \d+ req\/s, .*non-2xx 0, errors 0/, "rigd's upload URLs");
  t.match(out, /node:http sink \(own process\): \d+ MB\/s/, 'the sink, in its own process');
  t.match(out, /rigd's embedded store +: \d+ MB\/s/, "rigd's PUT");
  rssOfServe(t, out, pid);
});

test('bench:fleet on 100 rigs: the API from a namespace, the CLI beside rigd serve', async (t) => {
  if (sqliteOnly(t, 'the bench seeds and runs rigd on its default database')) return;
  const { code, out } = await bench('fleet', { BENCH_RIGS: '100', BENCH_HTTP_RUNS: '2' });
  t.equal(code, 0, `it ran to its end${code === 0 ? '' : `:\n${out.slice(-2000)}`}`);
  const pid = started(t, 'fleet', out, []);
  t.match(out, /^GET \/api\/v1\/rigs\/rig\d+ .* from the namespace: p50 \d+ ms/m, 'one rig over HTTP');
  t.match(out, /^GET \/api\/v1\/rigs \(.* from the namespace: p50 \d+ ms/m, 'every rig over HTTP');
  t.match(out, /^whole process, rigd fleet --json \(beside serve\): \d+ ms$/m, 'the fleet summary as a process');
  rssOfServe(t, out, pid);
});

test('bench:ingest on a 2 MB capture: the webhook to ingested, curl from a namespace', async (t) => {
  if (sqliteOnly(t, 'the bench reads the job state from the SQLite database file')) return;
  const { code, out } = await bench('ingest', { BENCH_SIZES: '2', BENCH_RUNS: '2' });
  t.equal(code, 0, `it ran to its end${code === 0 ? '' : `:\n${out.slice(-2000)}`}`);
  const pid = started(t, 'ingest', out, ['RIGD_STORAGE_PUBLIC_URL', 'RIGD_STORAGE_MAX_UPLOAD_SIZE', 'RIGD_INGEST_WEBHOOK_TOKEN']);
  t.match(out, /^ +2 +\d+ +\d+ +[0-9.]+ +\d+ +[0-9.]+$/m, 'throughput vs curl and RSS growth of the 2 MB capture');
  t.match(out, /^size [0-9.]+ MB: p50 \d+ ms, p95 \d+ ms/m, 'webhook -> ingested latency');
  const serving = /rigd serve pid (\d+)/.exec(out);
  t.ok(serving && Number(serving[1]) !== pid, "RSS read from the process that serves, not bin/rigd's relaunching parent");
});
