// test: alone (runs bench load against a rigd serve process)
// bench:report-tail starts and prints its figures on a tiny run (the figures themselves are not
// judged: a test never asserts a time or a rate). It runs bin/rigd serve as its own process (on the
// suite's engine: --engine postgres starts its own throwaway cluster), the bare route in another,
// the load from a rig network namespace (10.144.46.0/24); every report answered must be a history row.
import test from 'tape';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/dialect.ts';

function bench(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/report-tail.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

test('bench:report-tail on a tiny run: rigd serve and the bare route as processes, figures printed, rows == 2xx', async (t) => {
  const engine = onPostgres ? 'postgres' : 'sqlite';
  const { code, out } = await bench(['--engine', engine], { BENCH_DURATION: '1', BENCH_CONNECTIONS: '4', BENCH_RIGS: '20' });
  const ran = code === 0 || code === 1;
  t.ok(ran, `it ran to its end (exit 0: every target met, 1: one missed)${ran ? '' : `; exit ${code}:\n${out.slice(-2000)}`}`);
  t.match(out, /^rigd: {4}.*RIGD_DATA_DIR=\S+ .*bin\/rigd serve --port 0$/m, 'the command line rigd was started with');
  t.match(out, /\| bare hapi PUT \(own process\) +\| \d+ req\/s, p50 \d+ ms, p99 \d+ ms, 0 errors/, "the bare route's req/s, p50, p99, errors");
  t.match(out, new RegExp(`\\| rigd serve reports \\(${onPostgres ? 'PostgreSQL [0-9.]+' : 'SQLite'}\\) +\\| \\d+ req/s = [0-9.]+ x`), "rigd's req/s and the ratio, on the engine asked for");
  const rows = /reports: errors; rows vs 2xx +\| (\d+); (\d+) rows, (\d+) 2xx/.exec(out);
  t.ok(rows, 'errors, history rows and 2xx answers');
  t.deepEqual(rows && [rows[1], rows[2]], ['0', rows?.[3]], 'no error; history rows == 2xx answers');
  t.ok(Number(rows?.[3]) >= 1000, 'at least the 1,000 requests of the smallest measured run answered');
  t.match(out, /CPU per request \(user \+ system\): rigd \d+ µs, bare \d+ µs/, 'CPU per request of both');
  t.match(out, /load average: [0-9.]+ [0-9.]+ [0-9.]+ at the start/, "the machine's load");
});
