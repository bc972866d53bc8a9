// Starts a baseline server (bench/serve/baseline-server.ts by default, or bench/serve/sink-server.ts)
// as a child process (`node --import tsx`, no source maps).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './rigd.ts';

export interface Baseline {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export function startBaseline(host: string, script = 'bench/serve/baseline-server.ts'): Promise<Baseline> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), host], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^(\d+)\n/.exec(out);
      if (m) resolve({ port: Number(m[1]), pid: child.pid!, stop: () => (child.kill('SIGTERM'), exited) });
    });
    child.on('exit', (code) => reject(new Error(`baseline server exited ${code}: ${out}`)));
  });
}
