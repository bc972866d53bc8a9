// What request logging costs a rig report: PUT /api/v1/rigs/:id throughput with the request log on
// (level info, one JSON line per request through pino into a buffered file stream, as serve writes
// stdout) and off (level silent), same machine, same run. Run by hand: npm run bench:logging
//
// Loopback passes the VPN rule here (vpn.cidr 127.0.0.0/8, Host 127.0.0.1; bench only).
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100).
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { createLogger, silentLogger, type Logger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = 1000;
const BODY = 'rig_serial=SN-0042&gpsd_latitude=47.376887&gpsd_longitude=8.541694&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';

async function load(url: string, duration: number): Promise<{ rps: number; ok: number; bad: number }> {
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    method: 'PUT',
    headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
    requests: [{ setupRequest: (req) => ({ ...req, path: `/api/v1/rigs/rig${n++ % RIGS}` }) }],
  });
  return { rps: (result['2xx'] + result.non2xx) / result.duration, ok: result['2xx'], bad: result.non2xx + result.errors + result.timeouts };
}

async function rigd(dir: string, log: Logger) {
  const { config } = loadConfig({ env: {}, overrides: { data_dir: dir, vpn: { cidr: '127.0.0.0/8' }, rigs: { new_ids_per_address_per_hour: 10_000_000 } } });
  const app = await openApp(config, { log });
  const server = await createServer(app, { host: '127.0.0.1', port: 0, log });
  await server.start();
  return { url: `http://127.0.0.1:${server.info.port}`, close: async () => (await server.stop(), await app.close()) };
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'rigd-bench-log-'));
  const logFile = path.join(root, 'rigd.log');
  const out = pino.destination({ dest: logFile, sync: false, mkdir: true });
  const on = await rigd(path.join(root, 'on'), createLogger('info', (line) => out.write(line)));
  const off = await rigd(path.join(root, 'off'), silentLogger);
  try {
    process.stdout.write(`rig reports, request log on vs off: ${CONNECTIONS} connections, ${DURATION} s each, ${cpus().length} CPUs, node ${process.version}\n`);
    await load(off.url, 2);
    await load(on.url, 2);
    const a = await load(off.url, DURATION);
    const b = await load(on.url, DURATION);
    out.flushSync();
    const lines = readFileSync(logFile, 'utf8').split('\n').filter((l) => l.includes('"msg":"request"')).length;
    process.stdout.write(`log off: ${a.rps.toFixed(0)} req/s (2xx ${a.ok}, other ${a.bad})\n`);
    process.stdout.write(`log on:  ${b.rps.toFixed(0)} req/s (2xx ${b.ok}, other ${b.bad}); ${lines} request lines written\n`);
    process.stdout.write(`ratio on/off ${(b.rps / a.rps).toFixed(3)}\n`);
    process.exitCode = a.bad + b.bad === 0 ? 0 : 1;
  } finally {
    // Requests cut off by the end of a timed run may still commit: let them.
    await new Promise((r) => setTimeout(r, 500));
    await on.close();
    await off.close();
    out.end();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
