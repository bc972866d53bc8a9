// A fleet of rigs reporting from VPN addresses (one network namespace, one reporter process), to a
// real `openApp` + server on a socket whose alerts sweep records every incident event it makes.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../../src/config/schema.ts';
import { createLogger, silentLogger } from '../../../src/log.ts';
import { createServer } from '../../../src/server/server.ts';
import { openApp, type App } from '../../../src/services/app.ts';
import type { IncidentEvent } from '../../../src/services/alerts/event.ts';
import { createHosts, type Hosts } from '../../helpers/netns.ts';
import { testConfig } from '../../helpers/server.ts';

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

export interface FleetRig {
  id: string;
  everyMs: number;
  /** Starts stopped (resume with start()). */
  paused?: boolean;
}

export interface Fleet {
  app: App;
  config: Readonly<Config>;
  url: string;
  net: Hosts;
  /** Every event the sweep made, in order, with whether a transaction came with it. */
  events: IncidentEvent[];
  inTransaction: boolean[];
  stop(...ids: string[]): void;
  start(...ids: string[]): void;
  /**
   * Starts rigs again as one return: the app's sweep is held until each of them has been answered a
   * report, so no sweep sees some back and some still silent (on a busy machine the reporter's first
   * reports of six rigs can be seconds apart, and a sweep between them rightly judges a part).
   */
  startTogether(...ids: string[]): Promise<void>;
  /** Answers seen per rig id (status codes). */
  answers: Map<string, number[]>;
  /** rigd stopped cleanly, away for awayMs (the rigs keep trying), then started again on the same port and database. */
  restart(awayMs: number): Promise<void>;
  close(): Promise<void>;
}

const REPORTER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reporter.mjs');

/** subnet: the third octet (36..41) this test file owns. */
export async function startFleet(subnet: number, rigs: FleetRig[], overrides: DeepPartial<Config> = {}): Promise<Fleet> {
  const gw = `10.144.${subnet}.1`;
  const addrs = rigs.map((_, i) => `10.144.${subnet}.${i + 2}`);
  const net = await createHosts([{ name: 'rigs', addr: addrs[0]!, gw, extraAddrs: addrs.slice(1) }]);
  const config = testConfig(overrides);
  const events: IncidentEvent[] = [];
  const inTransaction: boolean[] = [];
  // ALERTS_TEST_LOG=1: the app's log on stderr (what the sweep did).
  const log = process.env.ALERTS_TEST_LOG ? createLogger('info', (line) => process.stderr.write(line)) : silentLogger;
  const open = () =>
    openApp(config, {
      log,
      onIncident: async (event, transaction) => {
        events.push(structuredClone(event));
        inTransaction.push(Boolean(transaction));
      },
    });
  let app = await open();
  let server = await createServer(app, { host: '::', port: 0, log: silentLogger });
  await app.start();
  await server.start();
  const port = Number(server.info.port);
  const base = `http://${gw}:${port}`;
  const spec = rigs.map((r, i) => ({ id: r.id, addr: addrs[i], everyMs: r.everyMs, paused: r.paused ?? false }));
  const child: ChildProcess = spawn('ip', ['netns', 'exec', net.host('rigs').ns, process.execPath, REPORTER, base, JSON.stringify(spec)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = new Map<string, number[]>();
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const [id, status] = line.split(' ');
      if (id && id !== 'ack') answers.set(id, [...(answers.get(id) ?? []), Number(status) || 0]);
    }
  });
  const send = (cmd: string, ids: string[]) => ids.forEach((id) => child.stdin!.write(`${cmd} ${id}\n`));
  return {
    get app() {
      return app;
    },
    config,
    url: `http://127.0.0.1:${server.info.port}`,
    net,
    events,
    inTransaction,
    answers,
    stop: (...ids) => send('stop', ids),
    start: (...ids) => send('start', ids),
    async startTogether(...ids) {
      await app.alerts.stop();
      const before = new Map(ids.map((id) => [id, answers.get(id)?.length ?? 0]));
      send('start', ids);
      await until(`a report answered from each of ${ids.join(', ')}`, () => ids.every((id) => (answers.get(id) ?? []).slice(before.get(id)).includes(200)));
      app.alerts.start();
    },
    async restart(awayMs) {
      await server.stop({ timeout: 2000 });
      await app.close();
      await sleep(awayMs);
      app = await open();
      server = await createServer(app, { host: '::', port, log: silentLogger });
      await app.start();
      await server.start();
    },
    async close() {
      child.stdin!.end();
      if (child.exitCode === null) child.kill('SIGTERM');
      await server.stop({ timeout: 2000 });
      await app.close();
      await net.destroy();
    },
  };
}

/** Waits (polling every 100 ms, up to limitMs: a bound for a stuck test, not a timing claim) until check returns a value. */
export async function until<T>(what: string, check: () => Promise<T | null | undefined | false> | T | null | undefined | false, limitMs = 120_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
