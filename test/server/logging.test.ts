// Logs through pino: JSON lines with time, level and msg; the request id on every line logged while
// a request is served (route, request.logger, a service); secrets redacted; pretty or JSON output.
import test from 'tape';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, type LogLevel } from '../../src/log.ts';
import { chooseLogFormat } from '../../src/log/format.ts';
import { createServer } from '../../src/server/server.ts';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { http } from '../helpers/http.ts';
import { WAIT_MS, waitFor } from '../helpers/jobs.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const WEBHOOK_TOKEN = 'whk-7f3e9a1c5b2d8e4f';
const SET_COOKIE_TOKEN = 'setck-0a9b8c7d6e';

async function serverWithLog(level: LogLevel) {
  const raw: string[] = [];
  const log = createLogger(level, (line) => raw.push(line));
  const config = testConfig({ vpn: { cidr: '127.0.0.0/8' }, ingest: { webhook_token: WEBHOOK_TOKEN } });
  const app = await openApp(config, { log });
  const server = await createServer(app, { log, port: 0, host: '127.0.0.1' });
  // A route that logs as routes and services do: through request.logger, and through the app's
  // logger after an await, with no request in hand.
  server.route({
    method: 'GET',
    path: '/test/log-scope',
    options: { auth: false },
    handler: async (request) => {
      request.logger.info('from the route');
      await sleep(5);
      log.warn('from a service', { step: 2 });
      return { ok: true };
    },
  });
  // A route that answers with a session cookie, as the web login does.
  server.route({
    method: 'GET',
    path: '/test/set-cookie',
    options: { auth: false },
    handler: (_request, h) => {
      h.state('token', SET_COOKIE_TOKEN);
      return { ok: true };
    },
  });
  await server.start();
  const base = `http://127.0.0.1:${server.info.port}`;
  return { app, server, raw, log, base, close: async () => (await server.stop(), await app.close()) };
}

/**
 * Waits (60 s at most) until n request lines are written: a request's line follows its answer, so
 * a client can read the answer first. The assertions then judge what is there.
 */
async function requestLines(lines: () => string, n: number): Promise<void> {
  const count = () => lines().split('\n').filter((l) => l.includes('"msg":"request"') || / (GET|POST|PUT) \/\S* \d{3} /.test(l)).length;
  await waitFor(() => count() >= n, WAIT_MS, `${n} request lines`, 20).catch(() => undefined);
}

test('log lines: JSON with time, level and msg; the request id on every line of a request', async (t) => {
  const s = await serverWithLog('info');
  try {
    s.log.info('outside any request');
    const res = await http(`${s.base}/test/log-scope`, { headers: { 'x-request-id': 'trace-scope-1' } });
    t.equal(res.status, 200, 'the route answers');
    const other = await http(`${s.base}/test/log-scope`);
    t.equal(other.status, 200, 'a second request, with an id rigd makes');
    await requestLines(() => s.raw.join(''), 2);
    const lines = s.raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    t.ok(s.raw.every((l) => l.endsWith('\n') && l.indexOf('\n') === l.length - 1), 'one object per line');
    t.ok(lines.every((l) => typeof l.time === 'string' && typeof l.level === 'string' && typeof l.msg === 'string'), 'every line has time, level and msg');
    t.ok(s.raw.every((l) => l.startsWith('{"time":"')), 'the time opens each line');
    const traced = lines.filter((l) => l.request_id === 'trace-scope-1').map((l) => l.msg);
    t.deepEqual(traced.sort(), ['from a service', 'from the route', 'request'], 'route, service and request lines all carry the X-Request-Id');
    const second = lines.find((l) => l.msg === 'request' && l.request_id !== 'trace-scope-1');
    t.ok(second && typeof second.request_id === 'string', 'the other request has its own id');
    const secondLines = lines.filter((l) => l.request_id === second?.request_id).map((l) => l.msg);
    t.deepEqual(secondLines.sort(), ['from a service', 'from the route', 'request'], 'and it is on each of its lines, not mixed with the first');
    const outside = lines.find((l) => l.msg === 'outside any request');
    t.equal(outside?.request_id, undefined, 'a line outside a request has no request id');
    t.equal(lines.find((l) => l.msg === 'from a service')?.level, 'warn', 'levels by name');
  } finally {
    await s.close();
  }
});

test('secrets never reach the log: tokens, cookies, passwords, credentials in URLs', async (t) => {
  const s = await serverWithLog('debug');
  try {
    const password = 'pw-Q8v2xL0r9Zt';
    await s.app.users.create({ username: 'ada', email: 'ada@example.com', password });
    const login = await http(`${s.base}/api/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'ada', password }),
    });
    t.equal(login.status, 200, 'a login (password in the body, session token in the answer)');
    const sessionToken = login.json<{ token: string }>().token;
    t.ok(sessionToken.length > 8, 'a session token came back');
    const cookieToken = 'ck-4d1c8b7a2e6f';
    const urlPassword = 'urlpw-93kd7s';
    const rigs = await http(`${s.base}/api/v1/rigs?next=${encodeURIComponent(`http://minio:${urlPassword}@store.local:9000/b`)}`, {
      headers: { authorization: `Bearer ${sessionToken}`, cookie: `token=${cookieToken}` },
    });
    t.ok(rigs.status < 500, 'a request with a bearer token, a token cookie and a URL with credentials');
    const hook = await http(`${s.base}/api/v1/rigs`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    t.ok(hook.status < 500, 'a request carrying the webhook token');
    const cookieOut = await http(`${s.base}/test/set-cookie`);
    t.ok(cookieOut.cookies.some((c) => c.includes(SET_COOKIE_TOKEN)), 'an answer that sets the token cookie');
    const bodyToken = 'body-tok-61f0e2';
    await http(`${s.base}/api/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'ada', password: 'wrong-pw-x1', token: bodyToken }),
    });
    const dbPassword = 'dbpw-5h2k';
    s.log.info('storage', { url: `postgres://rigd:${dbPassword}@db.local/rigd`, storage: { endpoint: `https://key:${dbPassword}@s3.local` } });
    // The login, the two requests with tokens, the cookie and the failed login.
    await requestLines(() => s.raw.join(''), 5);
    const out = s.raw.join('');
    t.ok(out.includes('"authorization":"[Redacted]"'), 'the Authorization header is there, redacted');
    t.ok(out.includes('"cookie":"[Redacted]"'), 'the Cookie header is there, redacted');
    t.ok(out.includes('"set-cookie":"[Redacted]"'), 'the Set-Cookie of an answer, redacted');
    t.ok(out.includes('"password":"[Redacted]"'), 'the password in the body, redacted');
    t.ok(out.includes('postgres://rigd:[Redacted]@db.local/rigd'), 'a URL keeps its user and host, the password masked');
    t.ok(out.includes('minio:[Redacted]@store.local'), 'so does a URL in a query string');
    for (const [what, secret] of Object.entries({ password, sessionToken, cookieToken, urlPassword, webhook: WEBHOOK_TOKEN, setCookie: SET_COOKIE_TOKEN, bodyToken, wrongPassword: 'wrong-pw-x1', dbPassword })) {
      t.notOk(out.includes(secret), `${what} appears nowhere in the log`);
    }
  } finally {
    await s.close();
  }
});

test('pretty or JSON: auto is pretty on a terminal only; json and pretty are forced', (t) => {
  t.equal(chooseLogFormat('auto', true), 'pretty', 'auto, terminal: pretty');
  t.equal(chooseLogFormat('auto', false), 'json', 'auto, pipe or journal: JSON');
  t.equal(chooseLogFormat(undefined, false), 'json', 'unset: as auto');
  t.equal(chooseLogFormat('json', true), 'json', 'json on a terminal: JSON');
  t.equal(chooseLogFormat('pretty', false), 'pretty', 'pretty into a pipe: pretty');
  t.end();
});

test('rigd serve --log-format pretty: one readable line per request, no JSON; a bad format is refused', async (t) => {
  const dir = tmpDir();
  // No request counts as slow (log.slow_request_ms an hour): a slow one's line ends in slow=true,
  // and a busy machine can take over the default second for the first /api/v1/openapi.json.
  const serve = await serveProcess({ RIGD_DATA_DIR: dir, RIGD_LOG_LEVEL: 'info', RIGD_LOG_SLOW_REQUEST_MS: '3600000' }, ['--port', '0', '--host', '127.0.0.1', '--log-format', 'pretty']);
  const res = await http(`${serve.url}/api/v1/openapi.json`, { headers: { 'x-request-id': 'trace-pretty-1' } });
  t.equal(res.status, 200, '/api/v1/openapi.json answers');
  await requestLines(serve.output, 1);
  t.equal(await serve.stop(), 0, 'SIGTERM: exit 0');
  const lines = serve.output().trimEnd().split('\n');
  const request = lines.filter((l) => l.includes('/api/v1/openapi.json'));
  t.equal(request.length, 1, 'the request is one line');
  t.match(request[0] ?? '', /INFO.*: GET \/api\/v1\/openapi\.json 200 [\d.]+ ms 127\.0\.0\.1 \[trace-pretty-1\]$/, 'method, path, status, duration, client, request id');
  t.match(serve.output(), /stopping signal=SIGTERM/, 'the stop line, flushed before exit, its fields on the same line');
  t.ok(lines.every((l) => /^rigd listening on |^no users yet|^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+/.test(l)), 'every line: the ready line, or time and level then the message (no field on a line of its own)');
  t.notOk(/^\{/m.test(serve.output()), 'no line starts with {');
  const json = await serveProcess({ RIGD_DATA_DIR: dir, RIGD_LOG_LEVEL: 'info' }, ['--port', '0', '--host', '127.0.0.1']);
  await http(`${json.url}/api/v1/openapi.json`);
  await requestLines(json.output, 1);
  await json.stop();
  t.match(json.output(), /^\{"time":"[^"]+","level":"info","msg":"request",/m, 'without the flag, into a pipe: JSON lines');
  const bad = await rigd(['serve', '--log-format', 'yaml'], { env: { RIGD_DATA_DIR: dir } });
  t.notEqual(bad.code, 0, '--log-format yaml: refused');
  t.match(bad.stderr, /--log-format must be one of auto, json, pretty/, 'saying what it takes');
});
