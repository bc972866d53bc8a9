// The request deadline's watch list (src/server/ext/request-deadline.ts) keeps nothing of an answered
// request alive: measured in a child process (test/helpers/deadline-gc.ts) by V8 itself, whose line
// per collection (--trace-gc-nvp) says how many bytes each scavenge promoted to the old generation.
// 20,000 requests waiting 10 ms for a shared "commit" each, as rig reports wait for their batch, on
// 100 keep-alive connections, after a quiet spell that made the server's long-lived state old. With
// the watch list as a Map (before), every scavenge promoted the requests the Map's outgrown tables
// still held: about 115 MB in all, 5.7 KB a request, and three mark-compacts; now under 1 MB.
import { spawn } from 'node:child_process';
import path from 'node:path';
import test from 'tape';
import { REPO } from '../helpers/jobs.ts';

const REQUESTS = 20_000;

function run(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--trace-gc-nvp', '--max-semi-space-size=32', '--import', 'tsx', path.join(REPO, 'test', 'helpers', 'deadline-gc.ts'), String(REQUESTS)],
      { cwd: REPO, env: process.env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`deadline-gc exited ${code}`))));
  });
}

test('answered requests are not promoted by the deadline watch list: young-generation garbage stays young', async (t) => {
  const out = await run();
  const load = out.slice(out.indexOf('-- load'));
  t.ok(out.includes('-- load') && load.includes(`{"answered":${REQUESTS}}`), `the child answered ${REQUESTS} requests`);
  let scavenges = 0;
  let promoted = 0;
  for (const line of load.split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    scavenges++;
    promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? NaN);
  }
  t.ok(scavenges >= 10, `V8 reported the scavenges of the load (${scavenges})`);
  t.ok(Number.isFinite(promoted), 'each with its promoted bytes');
  const perRequest = promoted / REQUESTS;
  t.ok(perRequest < 1024, `under 1 KB promoted per answered request (${perRequest.toFixed(0)} bytes; ${(promoted / 1e6).toFixed(1)} MB in ${scavenges} scavenges)`);
});
