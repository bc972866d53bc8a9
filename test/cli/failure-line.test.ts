// The last-resort failure line ("rigd: unexpected error: ...") never shows a secret of the loaded
// config, whichever source set it: a database URL password written in config.yaml (not only one
// from RIGD_DATABASE_URL), the MinIO secret key, the webhook token, the cookie secret.
import test from 'tape';
import { maskInFailures, reportFailure } from '../../src/cli/fail.ts';

test('an unexpected error quoting config secrets prints them masked, exit 1', (t) => {
  const dbPassword = 'db-pass-from-the-config-file';
  const minioSecret = 'minio-secret-key-1234';
  const token = 'webhook-token-abcdef';
  maskInFailures(dbPassword, minioSecret, token, undefined, '');
  const err = new TypeError(
    `cannot reach host:5432/rigd as rigd with ${dbPassword}; storage said ${minioSecret}; token ${token}; postgres://rigd:other@db/rigd`,
  );
  const lines: string[] = [];
  const code = reportFailure(err, (l) => lines.push(l));
  const out = lines.join('');
  t.equal(code, 1, 'exit 1');
  t.match(out, /^rigd: unexpected error: TypeError: cannot reach/, 'one unexpected-error line');
  for (const secret of [dbPassword, minioSecret, token, 'other']) t.notOk(out.includes(secret), `${secret} is not printed`);
  t.match(out, /as rigd with \*\*\*; storage said \*\*\*; token \*\*\*; postgres:\/\/rigd:\*\*\*@db\/rigd/, 'each is replaced by ***');
  t.end();
});

test('the config loaded by a command has its secrets masked in failure lines (configFor)', async (t) => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const { Command } = await import('commander');
  const { configFor } = await import('../../src/cli/context.ts');
  const dir = mkdtempSync(path.join(tmpdir(), 'rigd-fail-'));
  const file = path.join(dir, 'config.yaml');
  const password = 'pw-only-in-the-yaml-file';
  writeFileSync(file, `data_dir: ${dir}/data\ndatabase:\n  url: "postgres://rigd:${password}@127.0.0.1:1/rigd"\ncluster:\n  single_node: true\n`);
  const cmd = new Command().option('--config <file>');
  cmd.parse(['node', 'rigd', '--config', file]);
  const saved = process.env.RIGD_DATABASE_URL;
  delete process.env.RIGD_DATABASE_URL;
  try {
    const config = await configFor(cmd);
    t.ok(config.database.url.includes(password), 'the password came from the file alone');
    const lines: string[] = [];
    reportFailure(new Error(`boom ${password}`), (l) => lines.push(l));
    t.notOk(lines.join('').includes(password), 'not printed');
    t.match(lines.join(''), /boom \*\*\*/);
  } finally {
    if (saved !== undefined) process.env.RIGD_DATABASE_URL = saved;
  }
  t.end();
});
