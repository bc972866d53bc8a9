// Load runs of bench/tail/load.ts (autocannon, the seed's report body, one path per rig id) in a
// process of their own inside a rig network namespace, so the load generator shares neither the
// server's event loop nor its address.
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Hosts } from '../../test/helpers/netns.ts';
import type { LoadRun } from '../tail/run.ts';
import { ROOT } from './rigd.ts';

export interface LoadSpec {
  net: Hosts;
  /** The namespace host the load runs in. */
  from: string;
  /** The Host header (the gateway's address: the VPN rule). */
  host: string;
  connections: number;
  rigs: number;
}

/** One run: `length` is seconds or "n" + a number of requests. */
export function loadRun(spec: LoadSpec, url: string, length: string): Promise<LoadRun> {
  const args = ['netns', 'exec', spec.net.host(spec.from).ns, process.execPath, '--import', 'tsx', path.join(ROOT, 'bench/tail/load.ts'), url, spec.host, String(spec.connections), length, String(spec.rigs)];
  const child = spawn('ip', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise<LoadRun>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadRun) : reject(new Error(`load exited ${code}: ${out}`)))),
  );
}

export const failures = (r: LoadRun) => r.errors + r.timeouts + r.non2xx;

/** One run of GETs of `template` ("{n}": a counter) for `seconds` (bench/serve/get-load.ts). */
export function getLoadRun(spec: Omit<LoadSpec, 'rigs'>, url: string, template: string, seconds: number): Promise<LoadRun> {
  const args = ['netns', 'exec', spec.net.host(spec.from).ns, process.execPath, '--import', 'tsx', path.join(ROOT, 'bench/serve/get-load.ts'), url, spec.host, String(spec.connections), String(seconds), template];
  const child = spawn('ip', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise<LoadRun>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadRun) : reject(new Error(`load exited ${code}: ${out}`)))),
  );
}
