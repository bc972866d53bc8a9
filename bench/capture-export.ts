/**
 * `rigd captures export` of a large table: time and peak RSS of the child process, for CSV and
 * NDJSON, against the export of a one-row table (the command's own footprint), and once more with
 * V8's old space capped at 16 MB (an export that held the table in memory would die there).
 *
 *   node --import tsx bench/capture-export.ts [rows]     (after npm run build; default 200000 rows;
 *   needs root and iproute2)
 *
 * Seeding as rigs and operators do it: `bin/rigd serve` in its own process with the default config;
 * the capture file is reserved (GET /api/v1/rigs/upload) from the gateway's rig-side address (a
 * rig network namespace's gateway, 10.144.49.1: the VPN rule) and PUT to the embedded store's
 * signed URL; rigd queues and ingests it by itself (ingest.auto_enqueue). About a minute for
 * 200,000 rows of 64-byte blobs. serve is stopped before the exports run.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createHosts } from '../test/helpers/netns.ts';
import { writeCaptureFile } from '../test/helpers/seed-capture.ts';
import { RIGD, startRigd } from './serve/rigd.ts';

const rows = Number(process.argv[2] ?? 200_000);
const GW = '10.144.49.1';
const KEY = 'rig1/bench.sqlite';
const work = mkdtempSync(path.join(os.tmpdir(), 'rigd-bench-export-'));
const dataDir = path.join(work, 'data');
mkdirSync(dataDir);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PUT a file to a signed URL, connecting to the gateway whatever host the URL names (signed with it). */
function putFile(url: string, via: string, file: string): Promise<number> {
  const u = new URL(url);
  const [host, port] = via.split(':');
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port: Number(port), method: 'PUT', path: `${u.pathname}${u.search}`, headers: { host: u.host, 'content-length': statSync(file).size } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

const cli = (args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile(RIGD, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`rigd ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    ),
  );

const net = await createHosts([{ name: 'rigs', addr: '10.144.49.2', gw: GW }]);
let id = 0;
try {
  const file = path.join(work, 'capture.sqlite');
  const t0 = Date.UTC(2026, 10, 23, 8);
  await writeCaptureFile(file, [
    {
      name: 'frames',
      columns: [
        { name: 'seq', type: 'INTEGER' },
        { name: 'taken_at', type: 'TEXT' },
        { name: 'img', type: 'BLOB' },
      ],
      rows: Array.from({ length: rows }, (_, i) => [i, new Date(t0 + i * 1000).toISOString(), Buffer.alloc(64, i % 256)]),
    },
    { name: 'meta', columns: [{ name: 'k', type: 'TEXT' }], rows: [['a']] },
  ]);
  const rigd = await startRigd({ dataDir, logFile: path.join(work, 'rigd.log') });
  try {
    const via = `${GW}:${rigd.port}`;
    const reserve = await fetch(`http://${via}/api/v1/rigs/upload?key=${encodeURIComponent(KEY)}&size=${statSync(file).size}`);
    if (reserve.status !== 200) throw new Error(`reserve: ${reserve.status} ${await reserve.text()}`);
    const { url } = (await reserve.json()) as { url: string };
    const put = await putFile(url, via, file);
    if (put !== 200) throw new Error(`PUT: ${put}`);
    for (;;) {
      const [c] = JSON.parse(await cli(['captures', '--json'])) as { id: number; state: string; last_error?: string }[];
      if (c?.state === 'failed') throw new Error(`ingest failed: ${c.last_error}`);
      if (c?.state === 'ingested') {
        id = c.id;
        break;
      }
      await sleep(500);
    }
  } finally {
    await rigd.stop();
  }

  const run = (label: string, table: string, format: string, nodeOptions = ''): void => {
    const out = path.join(work, `${table}.${format}`);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir, NODE_OPTIONS: nodeOptions };
    const child = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, RIGD, 'captures', 'export', String(id), table, '--format', format, '-o', out], { env, encoding: 'utf8' });
    if (child.status !== 0) {
      // Printed and counted, not thrown: the other runs' figures still come out.
      const why = /heap out of memory/.test(child.stderr) ? 'JavaScript heap out of memory' : child.stderr.trim().split('\n').slice(-1)[0];
      console.log(`${label.padEnd(34)} FAILED: ${why}`);
      process.exitCode = 1;
      return;
    }
    const [seconds, kb] = child.stderr.trim().split(/\s+/).slice(-2);
    console.log(`${label.padEnd(34)} ${String(statSync(out).size).padStart(11)} bytes  ${seconds} s  peak RSS ${Math.round(Number(kb) / 1024)} MB`);
  };
  console.log(`capture ${id}: frames with ${rows} rows`);
  run('one-row table (csv)', 'meta', 'csv');
  run('frames csv', 'frames', 'csv');
  run('frames ndjson', 'frames', 'ndjson');
  run('frames ndjson, old space 16 MB', 'frames', 'ndjson', '--max-old-space-size=16');
} finally {
  await net.destroy();
  rmSync(work, { recursive: true, force: true });
}
