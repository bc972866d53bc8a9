// A signal sent the moment `rigd serve` prints its listening line (as a supervisor or a script that
// waits for that line may): the handlers exist by then, so each start stops cleanly with exit 0.
// Before they were installed ahead of the line, some of these starts died of the signal itself.
import { spawn } from 'node:child_process';
import test from 'tape';
import { RIGD, rigdEnv } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

function startAndSignal(dataDir: string, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RIGD, 'serve', '--port', '0', '--host', '127.0.0.1'], {
      env: rigdEnv({ RIGD_DATA_DIR: dataDir, RIGD_LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (/rigd listening on http:\/\/\S+/.test(out)) child.kill(signal);
    });
    child.on('exit', (code, sig) => resolve({ code, signal: sig }));
  });
}

test('SIGTERM or SIGINT on the listening line: exit 0, every time', async (t) => {
  const dataDir = tmpDir();
  const results: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await startAndSignal(dataDir, i % 2 === 0 ? 'SIGTERM' : 'SIGINT');
    results.push(r.code === 0 ? 'exit 0' : `code ${r.code} signal ${r.signal}`);
  }
  t.deepEqual(results, Array(12).fill('exit 0'), '12 starts, each signalled on its line, each exits 0');
});
