// The request id's scope (src/log/request-scope.ts): AsyncLocalStorage is on only while a request
// of a route that keeps a scope is served; a rig report keeps none (its path runs without Node's
// promise hooks) and its lines name their request themselves; a request without a scope never
// carries an id an earlier request on the same connection left behind.
import test from 'tape';
import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../src/log.ts';
import { openRequestScopes } from '../../src/log/request-scope.ts';
import { createServer } from '../../src/server/server.ts';
import { openApp } from '../../src/services/app.ts';
import { testConfig } from '../helpers/server.ts';

type Line = Record<string, unknown>;

interface Answer {
  status: number;
  body: string;
}

/** One request over a real socket, from `localAddress`, on `agent`'s connections. */
function send(port: number, path: string, opts: { agent?: Agent; method?: string; id?: string; body?: string; localAddress?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${port}` };
    if (opts.id) headers['x-request-id'] = opts.id;
    if (opts.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const req = httpRequest({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers, agent: opts.agent, localAddress: opts.localAddress }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function serverWithScopes() {
  const raw: string[] = [];
  const log = createLogger('info', (line) => raw.push(line));
  const config = testConfig({ vpn: { cidr: '127.0.0.0/8' } });
  const app = await openApp(config, { log });
  const server = await createServer(app, { log, port: 0, host: '127.0.0.1' });
  const seen = new Map<string, number>();
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  // Routes that log as services do (the app's logger after an await, no request in hand) and note
  // how many scopes are open while they serve.
  const handler = (name: string) => async () => {
    seen.set(name, openRequestScopes());
    await sleep(5);
    log.warn('from a service', { route: name });
    return { ok: true };
  };
  server.route([
    { method: 'GET', path: '/test/scoped', options: { auth: false, handler: handler('scoped') } },
    { method: 'GET', path: '/test/unscoped', options: { auth: false, app: { logScope: false }, handler: handler('unscoped') } },
    {
      method: 'GET',
      path: '/test/held',
      options: {
        auth: false,
        handler: async () => {
          await held;
          return { ok: true };
        },
      },
    },
  ]);
  await server.start();
  const port = Number(server.info.port);
  const lines = () => raw.map((l) => JSON.parse(l) as Line);
  return { app, server, port, seen, release, lines, close: async () => (await server.stop(), await app.close()) };
}

test('request scope: on only while a scoped request is served; a route without one never sees a stale id', async (t) => {
  const s = await serverWithScopes();
  const one = new Agent({ keepAlive: true, maxSockets: 1 });
  const other = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    t.equal(openRequestScopes(), 0, 'no scope before any request');
    t.equal((await send(s.port, '/test/unscoped', { agent: one, id: 'alone-1' })).status, 200, 'a request of a route without a scope');
    t.equal(s.seen.get('unscoped'), 0, 'served with no scope open: AsyncLocalStorage stays off');

    t.equal((await send(s.port, '/test/scoped', { agent: one, id: 'scoped-1' })).status, 200, 'a scoped request, on the same connection');
    t.equal(s.seen.get('scoped'), 1, 'served inside its scope');
    await sleep(20);
    t.equal(openRequestScopes(), 0, 'its scope ends with its answer: AsyncLocalStorage off again');

    // A scoped request held open keeps AsyncLocalStorage on; a request without a scope on the
    // connection the scoped one used must not inherit its id.
    const holding = send(s.port, '/test/held', { agent: other, id: 'held-1' });
    for (let i = 0; i < 200 && openRequestScopes() === 0; i++) await sleep(10);
    t.equal(openRequestScopes(), 1, 'a held scoped request keeps one scope open');
    t.equal((await send(s.port, '/test/unscoped', { agent: one, id: 'alone-2' })).status, 200, 'a request without a scope meanwhile, on the first connection');
    t.equal(s.seen.get('unscoped'), 1, 'served while the other scope is open');
    s.release();
    t.equal((await holding).status, 200, 'the held request answers');
    await sleep(20);
    t.equal(openRequestScopes(), 0, 'every scope ended');

    const services = s.lines().filter((l) => l.msg === 'from a service');
    t.deepEqual(
      services.map((l) => `${String(l.route)} ${String(l.request_id)}`),
      ['unscoped undefined', 'scoped scoped-1', 'unscoped undefined'],
      'the scoped line carries its id; lines without a scope carry none (not scoped-1 left on the connection)',
    );
    const requests = s.lines().filter((l) => l.msg === 'request');
    t.deepEqual(
      requests.map((l) => String(l.request_id)).sort(),
      ['alone-1', 'alone-2', 'held-1', 'scoped-1'],
      'every request line names its request, scoped or not',
    );
  } finally {
    one.destroy();
    other.destroy();
    await s.close();
  }
});

test('rig reports keep no scope; a refused report names its request on its identity line', async (t) => {
  const s = await serverWithScopes();
  try {
    t.equal(s.server.match('PUT', '/api/v1/rigs/scoperig')?.settings.app?.logScope, false, 'the report route keeps no log scope');
    const body = 'rig_serial=SN-SCOPE&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';
    const first = await send(s.port, '/api/v1/rigs/scoperig', { method: 'PUT', id: 'report-1', body, localAddress: '127.0.0.2' });
    t.equal(first.status, 200, 'a report from 127.0.0.2 registers and binds the rig');
    t.equal(openRequestScopes(), 0, 'no scope open after a report');
    const refused = await send(s.port, '/api/v1/rigs/scoperig', { method: 'PUT', id: 'report-2', body, localAddress: '127.0.0.3' });
    t.equal(refused.status, 409, 'the same id from 127.0.0.3 while it is online: refused');
    await sleep(20);
    const event = s.lines().find((l) => l.msg === 'rig identity event' && l.event === 'rig_report_refused');
    t.equal(event?.request_id, 'report-2', 'the identity line carries the refused request id');
    t.equal(event?.rig, 'scoperig', 'for the rig refused');
    const requestLine = s.lines().find((l) => l.msg === 'request' && l.request_id === 'report-2');
    t.equal(requestLine?.status, 409, 'and the request line too');
  } finally {
    await s.close();
  }
});
