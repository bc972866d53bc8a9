// Log lines carry journald priorities (`<3>` for errors) only when stdout is the journal's stream:
// a child runs with JOURNAL_STREAM set to the device:inode of its own stdout, as systemd does.
import test from 'tape';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { RIGD, ROOT, rigdEnv } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const LOG_MODULE = path.join(ROOT, 'dist', 'log.js');

/**
 * Runs `node ARGS` through sh, which sets JOURNAL_STREAM to its stdout's device:inode (what systemd
 * does for StandardOutput=journal) when `journal` is true, and to another stream's otherwise.
 */
function run(args: string[], journal: boolean, env: Record<string, string>, onLine?: (out: string) => void) {
  const fd = journal ? 1 : 2;
  const script = `export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/$$/fd/${fd}); exec "$@"`;
  const child = spawn('sh', ['-c', script, 'sh', process.execPath, ...args], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
    onLine?.(stdout);
  });
  child.stderr.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, exited };
}

const EVERY_LEVEL = `const { createLogger } = await import(${JSON.stringify(LOG_MODULE)});
const log = createLogger('debug');
log.debug('d'); log.info('i'); log.warn('w'); log.error('e', { n: 1 });`;

test('logger: <N> priority prefix on the journal stream only', async (t) => {
  const journal = await run(['--input-type=module', '-e', EVERY_LEVEL], true, {}).exited;
  t.equal(journal.code, 0, `exit 0 ${journal.stderr}`);
  const lines = journal.stdout.trimEnd().split('\n');
  t.deepEqual(lines.map((l) => l.slice(0, 3)), ['<7>', '<6>', '<4>', '<3>'], 'debug 7, info 6, warn 4, error 3: what journalctl -p filters on');
  t.deepEqual(JSON.parse(lines[3].slice(3)), { time: JSON.parse(lines[3].slice(3)).time, level: 'error', msg: 'e', n: 1 }, 'after the prefix: the JSON line');

  const other = await run(['--input-type=module', '-e', EVERY_LEVEL], false, {}).exited;
  t.equal(other.code, 0, 'exit 0');
  const plain = other.stdout.trimEnd().split('\n');
  t.equal(plain.length, 4, 'four lines');
  t.ok(plain.every((l) => JSON.parse(l).msg), 'JOURNAL_STREAM naming another stream (stdout redirected under systemd): plain JSON lines');
  const unset = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', EVERY_LEVEL], { env: rigdEnv({}), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', () => resolve(out));
  });
  t.ok(unset.trimEnd().split('\n').every((l) => l.startsWith('{')), 'no JOURNAL_STREAM: plain JSON lines');
});

test('rigd serve under the journal: request lines carry <6>', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir(), RIGD_LOG_LEVEL: 'info' };
  let listening: (url: string) => void;
  const url = new Promise<string>((resolve) => (listening = resolve));
  let logged: () => void;
  const requestLogged = new Promise<void>((resolve) => (logged = resolve));
  const serve = run([RIGD, 'serve', '--port', '0', '--host', '127.0.0.1'], true, env, (out) => {
    const m = /rigd listening on (http:\/\/[^\s"]+)/.exec(out);
    if (m) listening(m[1]);
    if (out.includes('"msg":"request"')) logged();
  });
  const base = await Promise.race([url, serve.exited.then((r) => Promise.reject(new Error(`serve exited: ${r.stdout}${r.stderr}`)))]);
  // (/healthz polls are logged at debug: a route logged at info)
  const res = await fetch(`${base}/api/v1/openapi.json`);
  t.equal(res.status, 200, '/api/v1/openapi.json answers');
  await res.text();
  // The request line is written once the response has gone out: stop only after it (or after a minute).
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([requestLogged, new Promise((r) => (timer = setTimeout(r, 60_000)))]);
  clearTimeout(timer);
  serve.child.kill('SIGTERM');
  const end = await serve.exited;
  t.equal(end.code, 0, 'SIGTERM: exit 0');
  const request = end.stdout.split('\n').find((l) => l.includes('"msg":"request"')) ?? '';
  t.match(request, /^<6>\{"time":"[^"]+","level":"info","msg":"request",.*"path":"\/api\/v1\/openapi.json","status":200/, 'the request line: <6> then the JSON');
  t.match(end.stdout, /^<6>\{"time":"[^"]+","level":"info","msg":"rigd listening on http:\/\/127\.0\.0\.1:\d+","url":"http:\/\/127\.0\.0\.1:\d+"\}$/m, 'the ready line too');
  t.match(end.stdout, /^<6>\{.*"msg":"stopping","signal":"SIGTERM"\}$/m, 'the stop line too');
});
