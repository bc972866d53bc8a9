// `bin/rigd serve` sets what it needs to run fast by itself: a 32 MiB semi-space (V8's young
// generation; its heap limit grows by 3 x the 16 MiB more than node's default) and a libuv pool of
// 16 threads, as its debug line "runtime" reports; an operator's NODE_OPTIONS and UV_THREADPOOL_SIZE
// win. Run as an operator runs it: the executable itself, no node flags of the test's.
import test from 'tape';
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { RIGD, rigdEnv } from '../helpers/cli.ts';
import { WAIT_MS, waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** V8's heap limit of a plain node with the same NODE_OPTIONS, in MiB. */
function plainHeapLimit(nodeOptions = ''): number {
  const out = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], { env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions } });
  return Math.round(Number(out) / 1048576);
}

interface Started {
  runtime: Record<string, unknown>;
  /** The pid that listens (the serve marker's) and the pid started. */
  serverPid: number;
  startedPid: number;
  code: number | null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function serveOnce(env: Record<string, string>, stopWith: NodeJS.Signals = 'SIGTERM'): Promise<Started> {
  const dir = tmpDir();
  const child = spawn(RIGD, ['serve', '--port', '0', '--host', '127.0.0.1'], { env: rigdEnv({ RIGD_DATA_DIR: dir, RIGD_LOG_LEVEL: 'debug', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A busy machine may take long to start node twice (bin/rigd, then the server it starts).
  const listening = await waitFor(() => out.includes('rigd listening on'), WAIT_MS, 'the listening line', 50).then(
    () => true,
    () => false,
  );
  if (!listening) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`no listening line within ${WAIT_MS / 1000} s:\n${out}`);
  }
  const marker = readdirSync(path.join(dir, 'run')).find((n) => n.startsWith('serve-'));
  child.kill(stopWith);
  const code = await exited;
  const line = out.split('\n').find((l) => l.includes('"msg":"runtime"'));
  if (!line) throw new Error(`no runtime line:\n${out}`);
  return { runtime: JSON.parse(line) as Record<string, unknown>, serverPid: Number(marker?.slice('serve-'.length)), startedPid: child.pid!, code };
}

test('bin/rigd serve: a 32 MiB semi-space and 16 threads by itself; NODE_OPTIONS and UV_THREADPOOL_SIZE win', async (t) => {
  const base = plainHeapLimit();
  const own = await serveOnce({});
  t.equal(own.code, 0, 'SIGTERM to the process started: it ends with exit 0');
  t.equal(own.runtime.max_semi_space_mb, 32, 'max_semi_space_mb 32');
  t.equal(own.runtime.heap_size_limit_mb, base + 3 * (32 - 16), `V8's heap limit is node's default (${base} MiB) + 3 x 16 MiB: the flag took effect`);
  t.equal(own.runtime.threadpool_size, 16, 'threadpool_size 16');
  t.notEqual(own.serverPid, own.startedPid, 'without the flag, the server is the child bin/rigd started with it');

  const killed = await serveOnce({}, 'SIGKILL');
  const gone = await waitFor(() => !alive(killed.serverPid), WAIT_MS, 'the server to stop', 50).then(
    () => true,
    () => false,
  );
  t.ok(killed.serverPid > 0 && gone, 'the process started killed with -9: the server it started stops too');

  const operator = await serveOnce({ NODE_OPTIONS: '--max-semi-space-size=8', UV_THREADPOOL_SIZE: '6' });
  t.equal(operator.code, 0, 'exit 0');
  t.deepEqual([operator.runtime.max_semi_space_mb, operator.runtime.threadpool_size], [8, 6], "the operator's NODE_OPTIONS and UV_THREADPOOL_SIZE win");
  t.equal(operator.runtime.heap_size_limit_mb, plainHeapLimit('--max-semi-space-size=8'), 'the heap limit is that of a node with the same NODE_OPTIONS');
  t.equal(operator.serverPid, operator.startedPid, 'the flag given: one process, no second start');
});
