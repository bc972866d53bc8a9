// Several `rigd serve` processes as one service, for tests: N nodes (bin/rigd, the built CLI: run
// `npm run build` first) on one PostgreSQL database (the test file's, RIGD_DATABASE_URL) and one S3
// peer (s3rver; storage.driver minio), each with its own data_dir, free port, config file,
// cluster.instance_id and host name (a UTS namespace). Rigs report from a network namespace
// (10.144.90.2 through the gateway 10.144.90.1, which is vpn.cidr), so the VPN rule lets them in;
// everything else talks to the nodes over loopback. Needs root (namespaces).
//
//   const c = await startCluster({ config: { ingest: { read_bytes_per_s: 0 } } });
//   await c.net.requestAll('rig', [{ url: `${c.node('node-a').rigUrl}/api/v1/rigs/r1`, method: 'PUT', ... }]);
//   await c.node('node-a').stop('SIGKILL');
//   await c.close();
import type { ChildProcess } from 'node:child_process';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client as MinioClient } from 'minio';
import pg from 'pg';
import { stringify } from 'yaml';
import { RIGD, rigd, type CliResult } from './cli.ts';
import { http } from './http.ts';
import { waitFor } from './jobs.ts';
import { createHosts, type Hosts } from './netns.ts';
import { startS3Peer, type S3Peer } from './s3-peer.ts';
import { tmpDir } from './tmp.ts';
import { freePort } from './free-port.ts';
import { startServe } from './serve-process.ts';

/** The rigs' namespace: its address, and the gateway (in vpn.cidr) where they reach the nodes. */
export const RIG_ADDR = '10.144.90.2';
export const RIG_GW = '10.144.90.1';
export const RIG_CIDR = '10.144.90.0/24';
export const WEBHOOK_TOKEN = 'cluster-webhook-secret-0123456789';
export const BUCKET = 'captures';

/** Longest wait for a node's "rigd listening on" line. */
const START_TIMEOUT_MS = 60_000;

export interface ClusterNode {
  id: string;
  port: number;
  dataDir: string;
  configFile: string;
  /** Where the test process reaches it (loopback). */
  url: string;
  /** Where a rig in the namespace reaches it (the gateway address). */
  rigUrl: string;
  /** The running process's id (undefined before start / after exit). */
  pid(): number | undefined;
  running(): boolean;
  /** stdout and stderr so far (the listening line, JSON log lines, errors). */
  output(): string;
  /** Starts `rigd serve` and resolves once it printed its listening line; rejects with its output otherwise. */
  start(): Promise<void>;
  /** Sends a signal (SIGTERM by default, SIGKILL for a crash) and resolves with how it exited. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Runs `bin/rigd --config <this node's config> ARGS` to completion. */
  cli(args: string[], input?: string): Promise<CliResult>;
}

export interface Cluster {
  nodes: ClusterNode[];
  node(id: string): ClusterNode;
  /** The one database every node uses. */
  databaseUrl: string;
  s3: S3Peer;
  /** The rigs' namespace (host 'rig'). */
  net: Hosts;
  /** Runs one query on the shared database. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Puts a local file into the bucket, as a rig's upload would; returns its etag and size. */
  putObject(key: string, file: string): Promise<{ etag: string; size: number }>;
  /** Every node's output, labelled: for failure messages. */
  outputs(): string;
  /** Stops every running node (SIGTERM, then SIGKILL after 20 s), the peer and the namespace. */
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** Instance ids, one node each. @default ['node-a', 'node-b'] */
  ids?: string[];
  /** Config merged (deeply) into every node's file. */
  config?: Record<string, unknown>;
  /** Start the nodes now, all at the same moment. @default true */
  start?: boolean;
  /** The database. @default the test file's (RIGD_DATABASE_URL) */
  databaseUrl?: string;
  /** The rigs' namespace: its address, gateway and vpn.cidr. @default RIG_ADDR, RIG_GW, RIG_CIDR */
  rigNet?: { addr: string; gw: string; cidr: string };
  /**
   * Every node with this one host name, each in a PID namespace of its own where rigd is PID 1 (as
   * containers run it): host name and pid tell no node from another. @default host-<id>, own pids
   */
  sameHost?: string;
}


function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? merge(b, v) : v;
  }
  return out;
}

/** The environment of a node's process: its config file says everything (the database URL too). */
function nodeEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, UV_THREADPOOL_SIZE: '16' };
}

/** The one child of a process (unshare --fork's), read from /proc. */
function forkedChild(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  if (children.length !== 1) throw new Error(`process ${pid} has ${children.length} children, expected 1`);
  return Number(children[0]);
}


function makeNode(id: string, port: number, gw: string, config: Record<string, unknown>, sameHost?: string): ClusterNode {
  const dataDir = tmpDir(`rigd-${id}-`);
  const configFile = path.join(dataDir, 'config.yaml');
  writeFileSync(configFile, stringify(merge(config, { server: { port }, data_dir: dataDir, cluster: { instance_id: id } })));
  let child: ChildProcess | undefined;
  /** rigd's pid as this process sees it (in a PID namespace, the child of unshare). */
  let rigdPid: number | undefined;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });
  let output: () => string = () => '';
  const node: ClusterNode = {
    id,
    port,
    dataDir,
    configFile,
    url: `http://127.0.0.1:${port}`,
    rigUrl: `http://${gw}:${port}`,
    pid: () => rigdPid ?? child?.pid,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    output: () => output(),
    async start() {
      // A UTS namespace of its own, host name `host-<id>`: as on two machines, a node cannot tell
      // from another's lease that its process is gone, and waits for the lease to run out. The
      // shell execs node, so the child's pid is rigd's (SIGKILL reaches it).
      // sameHost: one host name for all, and a PID namespace each (unshare forks; the shell it
      // starts is PID 1 there and execs node, so rigd is PID 1; signals go to rigd's own pid).
      const ns = sameHost ? ['--uts', '--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL'] : ['--uts'];
      const argv = [...ns, '--', 'sh', '-c', 'hostname "$0" && exec "$@"', sameHost ?? `host-${id}`, process.execPath, '--max-semi-space-size=32', RIGD, '--config', configFile, 'serve'];
      rigdPid = undefined;
      const started = await startServe('unshare', argv, nodeEnv(), { timeoutMs: START_TIMEOUT_MS, label: id });
      child = started.child;
      exited = started.exited;
      output = started.output;
      if (sameHost) rigdPid = forkedChild(child.pid!);
    },
    async stop(signal = 'SIGTERM') {
      if (node.running()) {
        if (rigdPid !== undefined) process.kill(rigdPid, signal);
        else child!.kill(signal);
      }
      return exited;
    },
    cli: (args, input) => rigd(['--config', configFile, ...args], { env: nodeEnv() as Record<string, string>, input, timeoutMs: 60_000 }),
  };
  return node;
}

/**
 * Starts the S3 peer, the rigs' namespace and (unless start: false) every node at the same moment.
 * Needs the PostgreSQL database of the test file (npm run test:pg): throws without one.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const databaseUrl = opts.databaseUrl ?? process.env.RIGD_DATABASE_URL;
  if (!databaseUrl) throw new Error('startCluster needs PostgreSQL: run the file with npm run test:pg');
  const rigNet = opts.rigNet ?? { addr: RIG_ADDR, gw: RIG_GW, cidr: RIG_CIDR };
  const s3 = await startS3Peer();
  let hosts: Hosts | undefined;
  const nodes: ClusterNode[] = [];
  const close = async () => {
    await Promise.all(
      nodes.map(async (n) => {
        if (!n.running()) return;
        const timer = setTimeout(() => void n.stop('SIGKILL'), 20_000);
        await n.stop('SIGTERM');
        clearTimeout(timer);
      }),
    );
    await hosts?.destroy();
    await s3.close();
  };
  try {
    hosts = await createHosts([{ name: 'rig', addr: rigNet.addr, gw: rigNet.gw }]);
    const base = merge(
      {
        server: { host: '0.0.0.0' },
        vpn: { host: 'vpn.rigs.internal', cidr: rigNet.cidr },
        database: { url: databaseUrl },
        storage: {
          driver: 'minio',
          bucket: BUCKET,
          minio: { endpoint: s3.endpoint, port: s3.port, access_key: s3.accessKey, secret_key: s3.secretKey, timeout_ms: 5000 },
        },
        ingest: { webhook_token: WEBHOOK_TOKEN, lease_s: 3 },
        cluster: { heartbeat_s: 1 },
        auth: { bcrypt_cost: 4 },
        log: { level: 'info', format: 'json' },
      },
      opts.config ?? {},
    );
    for (const id of opts.ids ?? ['node-a', 'node-b']) nodes.push(makeNode(id, await freePort(), rigNet.gw, base, opts.sameHost));
    if (opts.start !== false) await Promise.all(nodes.map((n) => n.start()));
  } catch (err) {
    await close();
    throw err;
  }
  const minio = new MinioClient({ endPoint: s3.endpoint, port: s3.port, useSSL: false, accessKey: s3.accessKey, secretKey: s3.secretKey, region: 'us-east-1' });
  return {
    nodes,
    node(id) {
      const n = nodes.find((x) => x.id === id);
      if (!n) throw new Error(`no node ${id}`);
      return n;
    },
    databaseUrl,
    s3,
    net: hosts,
    async query<T>(sql: string, params: unknown[] = []) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    },
    async putObject(key, file) {
      const size = statSync(file).size;
      if (!(await minio.bucketExists(BUCKET))) await minio.makeBucket(BUCKET, 'us-east-1');
      const { etag } = await minio.putObject(BUCKET, key, createReadStream(file), size);
      return { etag, size };
    },
    outputs: () => nodes.map((n) => `--- ${n.id} ---\n${n.output().slice(-4000)}`).join('\n'),
    close,
  };
}

/** GET /api/v1/captures/{id} on node n (with a user token) until the capture is ingested or failed. */
export function settledCapture(n: ClusterNode, token: string, id: number, timeoutMs: number): Promise<{ state: string }> {
  return waitFor(
    async () => {
      const res = await http(`${n.url}/api/v1/captures/${id}`, { headers: { authorization: token } });
      const capture = res.status === 200 ? (res.json().data.capture as { state: string }) : null;
      return capture && (capture.state === 'ingested' || capture.state === 'failed') ? capture : null;
    },
    timeoutMs,
    `capture ${id} to settle`,
    200,
  );
}
