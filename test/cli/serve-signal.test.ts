// test: alone (signals sent the moment rigd serve starts; each start bounded to 20 s)
// A signal sent the moment `rigd serve` prints its listening line (as a supervisor or a script that
// waits for that line may): the handlers exist by then, so each start stops cleanly with exit 0.
// Before they were installed ahead of the line, some of these starts died of the signal itself.
import test from 'tape';
import { serveProcess, type Exit } from '../helpers/serve-process.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Starts rigd serve and sends it `signal` on its listening line; resolves with how it exited. */
async function startAndSignal(dataDir: string, signal: NodeJS.Signals): Promise<Exit> {
  const serve = await serveProcess({ RIGD_DATA_DIR: dataDir, RIGD_LOG_LEVEL: 'warn' });
  serve.child.kill(signal);
  return serve.exited;
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
