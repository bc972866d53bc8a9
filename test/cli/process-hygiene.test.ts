// Process hygiene, each fault for real: SIGHUP (what logrotate's postrotate sends) to rigd serve is
// logged and changes nothing; commands whose stdout is closed (the reader of `rigd rigs | head` went
// away) end quietly; a config file over 1 MiB is refused at once with one line and exit 2.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('SIGHUP to rigd serve: one log line, still serving, then a clean stop', async (t) => {
  const dataDir = tmpDir();
  const server = await serveProcess({ RIGD_DATA_DIR: dataDir, RIGD_LOG_LEVEL: 'info', RIGD_LOG_FORMAT: 'json' });
  try {
    for (let i = 0; i < 2; i++) {
      server.child.kill('SIGHUP');
      await waitFor(async () => (server.output().match(/"msg":"SIGHUP received[^"]*"/g) ?? []).length > i, 60_000, `SIGHUP ${i + 1} logged`, 50);
    }
    t.pass('each SIGHUP logged (logs go to stdout: nothing to reopen)');
    t.equal(server.child.exitCode, null, 'rigd serve is still running');
    const health = await http(`${server.url}/healthz`);
    t.equal(health.status, 200, '/healthz still answers 200');
    const users = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env: { RIGD_DATA_DIR: dataDir }, input: 'ana-password-123' });
    t.equal(users.code, 0, 'a write beside it works');
    const login = await http(`${server.url}/api/v1/sessions`, { json: { login: 'ana', password: 'ana-password-123' } });
    t.equal(login.status, 200, 'and the server serves it');
  } finally {
    t.equal(await server.stop('SIGTERM'), 0, 'SIGTERM still stops it cleanly (exit 0)');
  }
  t.doesNotMatch(server.output(), /"level":"error"|Error:|\n\s+at /, 'no error or stack in its output');
});

/** Runs `rigd ARGS` with its stdout already closed by the reader: every write meets EPIPE. */
function withClosedStdout(args: string[], env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RIGD, ...args], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

test('every command survives a closed stdout: no EPIPE, no stack trace, it ends', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'ana-password-123' });
  t.equal(add.code, 0, 'a user, so that every listing has something to print');
  for (const args of [['rigs'], ['rigs', '--json'], ['fleet'], ['fleet', '--json'], ['doctor'], ['doctor', '--json'], ['user', 'list'], ['user', 'list', '--json'], ['captures', '--json'], ['uploads'], ['--help']]) {
    const res = await withClosedStdout(args, env);
    const label = `rigd ${args.join(' ')}`;
    t.equal(res.signal, null, `${label}: ended by itself`);
    t.doesNotMatch(res.stderr, /EPIPE|unexpected error|\n\s+at /, `${label}: nothing about the closed pipe on stderr ${res.stderr.slice(0, 300)}`);
  }
  // As an operator types it: the reader stops after its first bytes.
  for (const pipeline of ['rigs --json | head -c 10', 'doctor | head -1', 'fleet | head -1']) {
    const res = await new Promise<{ stderr: string; out: string }>((resolve) => {
      const child = spawn('bash', ['-c', `"$0" "$1" ${pipeline}`, process.execPath, RIGD], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let stderr = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', () => resolve({ out, stderr }));
    });
    t.doesNotMatch(res.stderr, /EPIPE|\n\s+at /, `rigd ${pipeline}: no stack trace ${res.stderr.slice(0, 300)}`);
  }
});

test('a config file over 1 MiB: refused at once, one line, exit 2', async (t) => {
  const dir = tmpDir();
  const big = path.join(dir, 'big.yaml');
  // Valid YAML all along (comments): only its size is wrong.
  writeFileSync(big, `data_dir: ${dir}\n${'# padding padding padding padding padding padding padding\n'.repeat(40_000)}`);
  const res = await rigd(['--config', big, 'user', 'list'], { env: {} });
  t.equal(res.code, 2, 'exit 2 (fix the config)');
  t.match(res.stderr, new RegExp(`^rigd: config: ${big} is 2\\.\\d MiB; a config file is at most 1 MiB \\(is it the right file\\?\\)\n$`), `one line naming the file, its size and the cap: ${res.stderr}`);
  const endless = await rigd(['--config', '/dev/zero', 'user', 'list'], { env: {} });
  t.equal(endless.code, 2, 'a file with no size to read first (/dev/zero): exit 2 as well');
  t.equal(endless.stderr, 'rigd: config: /dev/zero is more than 1 MiB; a config file is at most 1 MiB (is it the right file?)\n', 'read no further than the cap');
  const served = await rigd(['--config', big, 'serve', '--port', '0'], { env: {} });
  t.equal(served.code, 2, 'rigd serve refuses it the same way');
  const doctor = await rigd(['--config', big, 'doctor', '--json'], { env: {} });
  t.match(doctor.stdout, /a config file is at most 1 MiB/, 'rigd doctor names it in its config check');
});
