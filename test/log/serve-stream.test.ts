// What `rigd serve` writes on stdout, as operators pipe it: into a pipe every line is one JSON object
// (the ready line too, with its url; the first-user hint too), so `jq` reads the whole stream;
// /healthz and /metrics polls are at debug; on a terminal (a real pty, script(1)) each request is
// one line and the ready line is the contract's plain text.
import test from 'tape';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { RIGD, rigdEnv } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { WAIT_MS, waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Waits (60 s at most) until the output has a request line for each path; the assertions then judge what is there. */
async function requestLines(output: () => string, paths: string[]): Promise<void> {
  const has = (p: string) => output().includes(`"path":"${p}"`) || output().split('\n').some((l) => l.includes(` ${p} `) && !l.startsWith('{'));
  await waitFor(() => paths.every(has), WAIT_MS, `request lines of ${paths.join(', ')}`, 50).catch(() => undefined);
}

/** The request lines it waits for at each level (none at warn: it writes none). */
const LOGGED: Record<string, string[]> = { info: ['/api/v1/openapi.json', '/no-such-page'], debug: ['/healthz', '/metrics', '/api/v1/openapi.json', '/no-such-page'], warn: [] };

/**
 * No request counts as slow here (log.slow_request_ms an hour): a slow request is at info whatever
 * it is (test/log/report-logging.test.ts), and a busy machine can take over the default second for
 * the first /healthz. What is judged is the level of the polls.
 */
const NEVER_SLOW = { RIGD_LOG_SLOW_REQUEST_MS: '3600000' };

async function servePiped(level: string) {
  const serve = await serveProcess({ RIGD_DATA_DIR: tmpDir(), RIGD_LOG_LEVEL: level, ...NEVER_SLOW });
  for (const p of ['/healthz', '/metrics', '/api/v1/openapi.json', '/no-such-page']) await (await fetch(`${serve.url}${p}`)).arrayBuffer();
  // A request's line is written once its answer has gone out: wait for the lines, not a fixed time.
  await requestLines(serve.output, LOGGED[level] ?? []);
  const code = await serve.stop();
  // serveProcess gathers stderr too; stdout alone is what a pipe reader gets, and stderr is empty.
  return { code, url: serve.url, lines: serve.output().trimEnd().split('\n') };
}

test('stdout into a pipe: every line is one JSON object, the ready line with its url', async (t) => {
  const { code, url, lines } = await servePiped('info');
  t.equal(code, 0, 'SIGTERM: exit 0');
  const parsed = lines.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return null;
    }
  });
  t.deepEqual(lines.filter((_, i) => parsed[i] === null), [], 'no line that is not JSON');
  const objects = parsed.filter((o): o is Record<string, unknown> => o !== null);
  t.ok(objects.every((o) => typeof o.time === 'string' && typeof o.level === 'string' && typeof o.msg === 'string'), 'each with time, level and msg');
  const at = objects.findIndex((o) => o.url !== undefined);
  t.deepEqual(objects[at], { time: objects[at]?.time, level: 'info', msg: `rigd listening on ${url}`, url }, 'the ready line: the contract text as msg, the address as url');
  const hint = objects.findIndex((o) => o.msg === 'no users yet: add one with  rigd user add NAME --email EMAIL');
  t.ok(hint >= 0 && hint < at, 'the first-user hint, as JSON, before it');
  const requests = objects.filter((o) => o.msg === 'request').map((o) => `${o.path} ${o.status}`);
  t.deepEqual(requests.sort(), ['/api/v1/openapi.json 200', '/no-such-page 404'], 'requests at info, without the /healthz and /metrics polls');
  t.ok(objects.some((o) => o.msg === 'stopping'), 'the stop line');
});

test('log.level debug: the /healthz and /metrics polls are there, at debug; the ready line is written at warn', async (t) => {
  const debug = await servePiped('debug');
  const polls = debug.lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.msg === 'request' && (o.path === '/healthz' || o.path === '/metrics'))
    .map((o) => `${o.path} ${o.level}`);
  t.deepEqual(polls.sort(), ['/healthz debug', '/metrics debug'], 'each poll, at debug');
  const quiet = await servePiped('warn');
  const ready = JSON.parse(quiet.lines.find((l) => l.includes('"url"')) ?? '{}') as Record<string, unknown>;
  t.equal(ready.url, quiet.url, 'log.level warn: the ready line is still written (the contract), as JSON');
  t.notOk(quiet.lines.some((l) => l.includes('"msg":"request"')), 'and no request line');
});

test('on a terminal: one line per request, the ready line as plain text', async (t) => {
  const dir = tmpDir();
  const env = rigdEnv({ RIGD_DATA_DIR: dir, RIGD_LOG_LEVEL: 'info', TERM: 'dumb', ...NEVER_SLOW });
  // script(1) gives rigd serve a pseudo-terminal as stdout; log.format auto then picks the readable lines.
  const cmd = `exec ${process.execPath} ${RIGD} serve --port 0 --host 127.0.0.1`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await waitFor(() => /rigd listening on (http:\/\/[^\s"]+)/.exec(out)?.[1], WAIT_MS, 'the listening line', 50).catch(() => '');
  t.ok(url, 'it says it listens');
  try {
    for (const p of ['/api/v1/openapi.json', '/rigs', '/healthz']) await (await fetch(`${url}${p}`)).arrayBuffer();
    await requestLines(() => out, ['/api/v1/openapi.json', '/rigs']);
  } finally {
    // The server's own pid, from its serve marker (rigd restore reads the same marker).
    const marker = readdirSync(path.join(dir, 'run')).find((n) => n.startsWith('serve-'));
    if (marker) process.kill(Number(marker.slice('serve-'.length)), 'SIGTERM');
    else child.kill('SIGKILL');
    await exited;
  }
  const lines = out.replace(/\r/g, '').replace(/\x1b\[[0-9;]*m/g, '').trimEnd().split('\n');
  t.equal(lines.filter((l) => /^rigd listening on http:\/\/127\.0\.0\.1:\d+$/.test(l)).length, 1, 'the ready line, plain text');
  t.equal(lines.filter((l) => l.includes('/api/v1/openapi.json')).length, 1, 'GET /api/v1/openapi.json: one line');
  t.equal(lines.filter((l) => l.includes('/rigs')).length, 1, 'GET /rigs: one line');
  t.notOk(lines.some((l) => l.includes('/healthz')), 'the /healthz poll not at info');
  t.notOk(lines.some((l) => l.startsWith('{')), 'no JSON on a terminal');
  const other = lines.filter((l) => !/^rigd listening on |^no users yet/.test(l));
  t.deepEqual(other.filter((l) => !/^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+/.test(l)), [], 'every other line opens with its time and level');
});
