/**
 * CLI start-up, as a ratio to `node -e 0` measured in the same run (round-robin, so machine noise hits
 * every command alike). Targets (issue 6): `rigd --version` and `rigd user list --json` <= 3x,
 * `rigd rigs --watch` first frame <= 9x.
 *
 *   node --import tsx bench/cli-startup.ts [runs]      (after npm run build; default 15 runs each)
 *
 * Plain commands are timed from spawn to exit. `rigs --watch` needs a terminal: it runs under
 * script(1) (a pty) and is timed from spawn to its first frame (the summary line), then killed; its
 * baseline is `node -e 0` under script(1) too, so the pty's own cost cancels out. When hyperfine is
 * installed, it also times the plain commands (its figures are printed alongside).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RIGD = path.join(ROOT, 'bin', 'rigd');
const NODE = process.execPath;
const runs = Number(process.argv[2] ?? 15);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rigd-bench-'));
const env = { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir, TERM: 'xterm-256color' } as NodeJS.ProcessEnv;

function untilExit(cmd: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}`))));
  });
}

/** Under a pty: ms until stdout matches `ready`, then the process group is killed. */
function untilOutput(shellCommand: string, ready: RegExp): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // A pty made by script(1) has no size; Ink needs one (a real ssh session has it).
    const child = spawn('script', ['-qfec', `stty cols 160 rows 40; ${shellCommand}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    let out = '';
    let done = false;
    const finish = (ms: number) => {
      if (done) return;
      done = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      resolve(ms);
    };
    child.stdout.on('data', (d) => {
      out += String(d).replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
      if (ready.test(out)) finish(performance.now() - t0);
    });
    child.on('exit', () => (ready.test(out) ? finish(performance.now() - t0) : !done && reject(new Error(`no first frame: ${out}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const cases: { name: string; run: () => Promise<number>; baseline: string; target: number }[] = [
  { name: 'node -e 0', run: () => untilExit(NODE, ['-e', '0']), baseline: 'node -e 0', target: 1 },
  { name: 'rigd --version', run: () => untilExit(NODE, [RIGD, '--version']), baseline: 'node -e 0', target: 3 },
  { name: 'rigd user list --json', run: () => untilExit(NODE, [RIGD, 'user', 'list', '--json']), baseline: 'node -e 0', target: 3 },
  { name: 'node -e 0 (pty)', run: () => untilOutput(`${NODE} -e "console.log('ready')"`, /ready/), baseline: 'node -e 0 (pty)', target: 1 },
  { name: 'rigd rigs --watch (first frame, pty)', run: () => untilOutput(`${NODE} ${RIGD} rigs --watch`, /\d+ rigs?: \d+ online/), baseline: 'node -e 0 (pty)', target: 9 },
];

// Warm-up (the database is created and migrated by the first command; file caches fill).
await untilExit(NODE, [RIGD, 'user', 'list', '--json']);
for (const c of cases) await c.run();

const samples = new Map(cases.map((c) => [c.name, [] as number[]]));
for (let i = 0; i < runs; i++) for (const c of cases) samples.get(c.name)!.push(await c.run());

console.log(`CLI start-up, median of ${runs} runs each (${os.cpus().length} CPUs, node ${process.version}, load ${os.loadavg()[0].toFixed(2)})`);
console.log('| command | median ms | ratio to baseline | target |');
console.log('|---|---|---|---|');
for (const c of cases) {
  const ms = median(samples.get(c.name)!);
  const base = median(samples.get(c.baseline)!);
  const ratio = ms / base;
  const verdict = c.name === c.baseline ? 'baseline' : `<= ${c.target}x ${ratio <= c.target ? 'met' : 'NOT met'}`;
  console.log(`| ${c.name} | ${ms.toFixed(0)} | ${ratio.toFixed(2)}x | ${verdict} |`);
}

try {
  execFileSync('hyperfine', ['--version'], { stdio: 'ignore' });
  console.log('\nhyperfine (plain commands):');
  const out = execFileSync(
    'hyperfine',
    ['-N', '-w', '3', '-r', String(runs), '--style', 'basic', `${NODE} -e 0`, `${NODE} ${RIGD} --version`, `${NODE} ${RIGD} user list --json`],
    { env, encoding: 'utf8' },
  );
  console.log(out.split('\n').filter((l) => /Benchmark|Time|±|faster/.test(l)).join('\n'));
} catch {
  console.log('\n(hyperfine not installed: loop figures only)');
}
