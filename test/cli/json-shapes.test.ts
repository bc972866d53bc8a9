// test: alone (SIGINT 2.5 s after start must find the handler installed)
// Every listing command's --json is JSON only on stdout and has the shape README documents.
import test from 'tape';
import { spawn } from 'node:child_process';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

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

/** Runs `rigd ARGS` for `ms`, then SIGINT: exit code and stdout. */
function interrupted(args: string[], env: Record<string, string>, ms: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RIGD, ...args], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGINT'), ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('--watch --json is NDJSON (one object per line) until SIGINT, even on a fresh data_dir', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir(), RIGD_VPN_CIDR: '127.0.0.0/8' };
  // Migrated first: a SIGINT that arrives while the first command still migrates (seconds on a busy
  // PostgreSQL) ends it before it has installed its handler, which is not what this test is about.
  const migrated = await rigd(['migrate'], { env });
  t.equal(migrated.code, 0, `migrated first ${migrated.stderr}`);
  for (const what of ['rigs', 'uploads', 'captures']) {
    const args = [what, '--watch', '--json', '--interval', '0.2'];
    const res = await interrupted(args, env, 2500);
    t.equal(res.code, 0, `${args.join(' ')}: SIGINT, exit 0 ${res.stderr}`);
    const lines = res.stdout === '' ? [] : res.stdout.split('\n').slice(0, -1);
    t.ok(res.stdout === '' || res.stdout.endsWith('\n'), `${what}: whole lines only`);
    t.ok(lines.every((l) => typeof JSON.parse(l).event === 'string'), `${what}: every line is one event object (none here: nothing exists)`);
  }
});
