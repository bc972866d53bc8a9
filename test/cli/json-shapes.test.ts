// Every listing command's --json is JSON only on stdout and has the shape README documents.
import test from 'tape';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

const LISTENER_PRELOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'signal-listener.cjs');

test('--json of every listing command parses, even on a fresh data_dir', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir(), RIGD_VPN_CIDR: '127.0.0.0/8' };
  const add = await rigd(['user', 'add', 'ops', '--email', 'ops@example.com', '--password-stdin', '--json'], { env, input: 'correct horse battery\n' });
  t.equal(add.code, 0, `user add ${add.stderr}`);
  const cases: [string[], (v: unknown) => boolean][] = [
    [['rigs', '--json'], Array.isArray],
    [['uploads', '--json'], Array.isArray],
    [['captures', '--json'], Array.isArray],
    [['user', 'list', '--json'], (v) => Array.isArray(v) && v.length === 1 && Object.keys(v[0]).sort().join() === 'admin,created_at,email,id,username'],
    [['migrate', '--json'], (v) => typeof v === 'object' && v !== null && Array.isArray((v as { pending: unknown }).pending)],
  ];
  for (const [args, shape] of cases) {
    const res = await rigd(args, { env });
    t.equal(res.code, 0, `${args.join(' ')}: exit 0 ${res.stderr}`);
    let value: unknown;
    try {
      value = JSON.parse(res.stdout);
    } catch {
      value = undefined;
    }
    t.ok(value !== undefined && shape(value), `${args.join(' ')}: JSON of the documented shape`);
    t.notOk(res.stdout.includes('\u001b['), `${args.join(' ')}: no escape codes`);
  }
});

/**
 * Runs `rigd ARGS`, sends SIGINT once it has added its SIGINT listener (signal-listener.cjs says
 * when: a start on a busy machine takes seconds) and a few polls later: exit code and stdout.
 */
async function interrupted(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const marks = path.join(tmpDir(), 'listeners');
  const child = spawn(process.execPath, [RIGD, ...args], {
    env: rigdEnv({ ...env, NODE_OPTIONS: `--require ${LISTENER_PRELOAD}`, RIGD_TEST_SIGNAL_LISTENER_FILE: marks }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // 'close': the exit code once stdout has been read to its end.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  try {
    await waitFor(() => child.exitCode !== null || (existsSync(marks) && readFileSync(marks, 'utf8').split('\n').includes('SIGINT')), 60_000, `${args.join(' ')} to listen for SIGINT`, 50);
    // Several polls at --interval 0.2 go by before the signal.
    await new Promise((r) => setTimeout(r, 1000));
    child.kill('SIGINT');
    return { code: await exited, stdout, stderr };
  } finally {
    clearTimeout(killer);
  }
}

test('--watch --json is NDJSON (one object per line) until SIGINT, even on a fresh data_dir', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir(), RIGD_VPN_CIDR: '127.0.0.0/8' };
  // Migrated first: a SIGINT that arrives while the first command still migrates (seconds on a busy
  // PostgreSQL) ends it before it has installed its handler, which is not what this test is about.
  const migrated = await rigd(['migrate'], { env });
  t.equal(migrated.code, 0, `migrated first ${migrated.stderr}`);
  for (const what of ['rigs', 'uploads', 'captures']) {
    const args = [what, '--watch', '--json', '--interval', '0.2'];
    const res = await interrupted(args, env);
    t.equal(res.code, 0, `${args.join(' ')}: SIGINT, exit 0 ${res.stderr}`);
    const lines = res.stdout === '' ? [] : res.stdout.split('\n').slice(0, -1);
    t.ok(res.stdout === '' || res.stdout.endsWith('\n'), `${what}: whole lines only`);
    t.ok(lines.every((l) => typeof JSON.parse(l).event === 'string'), `${what}: every line is one event object (none here: nothing exists)`);
  }
});
