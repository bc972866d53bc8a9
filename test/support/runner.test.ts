// test: shares net 10.144.197 (its fixtures net-a and net-b make namespaces there)
// The suite's runner (test/run.mjs) on a tiny suite of its own (test/support/fixtures/runner/), each
// fixture recording when it started and ended: with two workers, two files sharing a network
// namespace subnet (read from their literals) or a declared resource never run at the same time, a
// file marked alone runs with nothing beside it, and two files sharing nothing do run together (so
// the records can show an overlap). Each file's output is printed whole, the failures and the summary
// line are as before, and RIGD_TEST_JOBS=1 runs one file at a time.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'tape';
import { tmpDir } from '../helpers/tmp.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixtures = path.join(root, 'test', 'support', 'fixtures', 'runner');
const NAMES = ['alone', 'fail', 'free-a', 'free-b', 'net-a', 'net-b', 'shared-a', 'shared-b'];
const files = NAMES.map((n) => path.join(fixtures, `${n}.test.ts`));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  runs: Map<string, { start: number; end: number }>;
}

function runner(args: string[], env: Record<string, string>, onSpawn?: (child: ChildProcess, log: string) => void): Promise<Run> {
  const log = tmpDir('rigd-runner-');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'test', 'run.mjs'), ...args], {
      cwd: root,
      env: { ...process.env, RIGD_TEST_RUNNER_LOG: log, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    onSpawn?.(child, log);
    child.on('close', (code) => {
      const runs = new Map<string, { start: number; end: number }>();
      let lines: string[] = [];
      try {
        lines = readFileSync(path.join(log, 'runs.jsonl'), 'utf8').trim().split('\n');
      } catch {
        // no fixture ran
      }
      for (const l of lines.filter(Boolean)) {
        const r = JSON.parse(l) as { name: string; start: number; end: number };
        runs.set(r.name, r);
      }
      resolve({ code, stdout, stderr, runs });
    });
  });
}

function overlap(run: Run, a: string, b: string): boolean {
  const x = run.runs.get(a);
  const y = run.runs.get(b);
  if (!x || !y) throw new Error(`no record of ${x ? b : a}`);
  return x.start < y.end && y.start < x.end;
}

/** The output cut at each "# file N of M" line: [header, block] per file, in the order printed. */
function blocks(stdout: string): Array<{ header: string; body: string }> {
  const parts = stdout.split(/^(?=# file \d+ of \d+, elapsed \d+s: )/m).filter((p) => p.startsWith('# file'));
  return parts.map((p) => {
    const nl = p.indexOf('\n');
    return { header: p.slice(0, nl), body: p.slice(nl + 1) };
  });
}

test('two workers: files that share a subnet, a named resource or need the machine alone never overlap; others do', async (t) => {
  const run = await runner(files, { RIGD_TEST_JOBS: '2' });
  t.equal(run.code, 1, `exit 1: one assertion failed (stderr: ${run.stderr.trim().slice(0, 500)})`);
  t.deepEqual([...run.runs.keys()].sort(), NAMES, 'every fixture ran and recorded its times');
  t.ok(overlap(run, 'free-a', 'free-b'), 'free-a and free-b, sharing nothing, ran at the same time');
  t.notOk(overlap(run, 'net-a', 'net-b'), 'net-a and net-b (both on 10.144.197.0/24) never at the same time');
  t.notOk(overlap(run, 'shared-a', 'shared-b'), 'shared-a and shared-b (both "shares runner-fixture") never at the same time');
  const beside = NAMES.filter((n) => n !== 'alone' && overlap(run, 'alone', n));
  t.deepEqual(beside, [], 'nothing ran beside the file marked alone');
  t.match(run.stdout, /^# failures:\n# {3}test\/support\/fixtures\/runner\/fail\.test\.ts: not ok 2 fail: this one does not$/m, 'the failure listed with its file');
  t.match(run.stdout, /\n8 passed, 1 failed, 1 skipped\n$/, 'the summary line ends the output');
  t.match(run.stdout, /^# 8 files in \d+s \(2 at once; the files. own times add up to \d+s\)$/m, 'the duration line says how many ran at once');

  const printed = blocks(run.stdout);
  t.deepEqual(printed.map((b) => Number(/^# file (\d+) of 8,/.exec(b.header)?.[1])), [1, 2, 3, 4, 5, 6, 7, 8], '"# file N of 8" once per file, N counting up');
  const whole = printed.every((b) => {
    const name = /fixtures\/runner\/(.+)\.test\.ts$/.exec(b.header)?.[1] ?? '?';
    const asserts = b.body.split('\n').filter((l) => /^(not )?ok \d+/.test(l));
    return asserts.length > 0 && asserts.every((l) => l.includes(`${name} `) || l.includes(`${name}:`));
  });
  t.ok(whole, "each file's TAP printed whole under its own header, not interleaved with another's");
  t.equal(printed.at(-1)?.header.endsWith('alone.test.ts'), true, 'the file marked alone runs after the others');
});

test('RIGD_TEST_JOBS=1: one file at a time', async (t) => {
  const run = await runner(files, { RIGD_TEST_JOBS: '1', RIGD_TEST_RUNNER_HOLD_MS: '300', RIGD_TEST_RUNNER_FREE_WAIT_MS: '300' });
  t.equal(run.code, 1, 'exit 1: one assertion failed');
  t.equal(run.runs.size, NAMES.length, 'every fixture ran');
  const pairs = NAMES.flatMap((a, i) => NAMES.slice(i + 1).filter((b) => overlap(run, a, b)).map((b) => `${a}+${b}`));
  t.deepEqual(pairs, [], 'no two files overlapped');
  t.match(run.stdout, /\n8 passed, 1 failed, 1 skipped\n$/, 'the same summary line');
  t.match(run.stdout, /^# 8 files in \d+s \(1 at once; the files. own times add up to \d+s\)$/m, 'one at once');
});

test('what each file holds, as the runner reads it; a bad RIGD_TEST_JOBS is refused', async (t) => {
  const list = await runner(['--resources', ...files], {});
  t.equal(list.code, 0, '--resources exits 0');
  const of = (n: string) => new RegExp(`^test/support/fixtures/runner/${n}\\.test\\.ts: (.*)$`, 'm').exec(list.stdout)?.[1];
  t.equal(of('net-a'), 'net:10.144.197', 'net-a: the subnet read from its literals');
  t.equal(of('shared-b'), 'runner-fixture', 'shared-b: the declared name');
  t.equal(of('alone'), 'alone (a fixture that must have the machine to itself)', 'alone: with its reason');
  t.equal(of('free-a'), '-', 'free-a: nothing');
  t.equal(list.runs.size, 0, 'and runs nothing');

  const bad = await runner(files, { RIGD_TEST_JOBS: 'two' });
  t.equal(bad.code, 2, 'RIGD_TEST_JOBS=two: exit 2');
  t.equal(bad.stderr, 'test/run.mjs: RIGD_TEST_JOBS must be a whole number of files at once (1 or more), not "two"\n', 'one line saying what is wrong');
  t.equal(bad.runs.size, 0, 'nothing ran');
});

test('SIGTERM (CI\'s time limit): the running file is stopped, nothing new starts, the summary line still ends the output', async (t) => {
  // free-a waits for free-b, which is not in this run: it runs until stopped.
  const run = await runner([path.join(fixtures, 'free-a.test.ts'), path.join(fixtures, 'shared-a.test.ts')], { RIGD_TEST_JOBS: '1' }, (child, log) => {
    void (async () => {
      while (!existsSync(path.join(log, 'free-a.start'))) await sleep(50);
      child.kill('SIGTERM');
    })();
  });
  t.equal(run.code, 1, 'exit 1');
  t.notOk(run.runs.has('shared-a'), 'the file after it never started');
  t.match(run.stdout, /^# file 1 of 2, elapsed \d+s: test\/support\/fixtures\/runner\/free-a\.test\.ts$/m, "the stopped file's output printed under its header");
  t.match(run.stdout, /^# {3}test\/support\/fixtures\/runner\/free-a\.test\.ts: exited with SIGTERM after 0 passing assertions$/m, 'the stopped file listed as a failure');
  t.match(run.stdout, /^# {3}the run was stopped by SIGTERM: 1 of 2 files did not run$/m, 'and the run as stopped');
  t.match(run.stdout, /\n0 passed, 2 failed, 0 skipped\n$/, 'the summary line ends the output');
});

test('start order: the files that share the machine first, in their order; the alone files last, in theirs', async (t) => {
  const { startOrder } = (await import(path.join(root, 'test', 'runner', 'schedule.mjs'))) as {
    startOrder(items: { rel: string; alone: boolean; resources: string[] }[]): { rel: string }[];
  };
  const item = (rel: string, resources: string[], alone = false) => ({ rel, alone, resources });
  const items = [
    item('a-free', []),
    item('b-alone', [], true),
    item('c-tmux', ['tmux']),
    item('d-pkg', [], true),
    item('e-net', ['net:10.144.1']),
    item('f-tmux', ['tmux']),
    item('g-pair', ['etc-passwd']),
    item('h-alone', [], true),
  ];
  t.deepEqual(
    startOrder(items).map((it) => it.rel),
    ['a-free', 'c-tmux', 'e-net', 'f-tmux', 'g-pair', 'b-alone', 'd-pkg', 'h-alone'],
    'shared files in their order, then b-alone, d-pkg, h-alone in theirs',
  );
});
