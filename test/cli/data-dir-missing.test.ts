// A command that only reads, given a data_dir that does not exist (a mistyped RIGD_DATA_DIR or
// data_dir), says so in one line, exits non-zero and creates nothing; an existing empty data_dir is
// a fresh install (the database is created); rigd migrate and rigd user add create a missing one.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { onPostgres, postgresOnly, sqliteOnly } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const READ_ONLY: string[][] = [
  ['rigs'],
  ['rigs', '--json'],
  ['rigs', 'show', 'rig7'],
  ['rigs', 'history', 'rig7'],
  ['fleet'],
  ['captures'],
  ['captures', '--json'],
  ['captures', 'show', '1'],
  ['captures', 'export', '1', 'readings'],
  ['captures', 'query', 'SELECT 1'],
  ['uploads'],
  ['uploads', '--json'],
  ['user', 'list'],
  ['audit'],
  ['audit', 'verify'],
  ['alerts'],
];

test('read-only commands on a data_dir that does not exist: one line saying so, exit 2, nothing created', async (t) => {
  if (sqliteOnly(t, 'on PostgreSQL the database is not in data_dir: a missing data_dir does not hide the rigs')) return t.end();
  const parent = tmpDir();
  const missing = path.join(parent, 'dta');
  for (const args of READ_ONLY) {
    const res = await rigd(args, { env: { RIGD_DATA_DIR: missing } });
    t.equal(res.code, 2, `rigd ${args.join(' ')}: exit 2 (${res.stderr.trim()})`);
    t.equal(res.stdout, '', `rigd ${args.join(' ')}: nothing on stdout`);
    t.equal(
      res.stderr,
      `rigd: data_dir ${missing} does not exist: check RIGD_DATA_DIR, data_dir in the config file or --config (rigd serve, rigd migrate and rigd user add create it; this command only reads)\n`,
      `rigd ${args.join(' ')}: one line naming data_dir`,
    );
    t.notOk(existsSync(missing), `rigd ${args.join(' ')}: data_dir not created`);
  }
  t.end();
});

test('a data_dir from a config file that does not exist: refused the same way', async (t) => {
  if (sqliteOnly(t, 'on PostgreSQL the database is not in data_dir')) return t.end();
  const dir = tmpDir();
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'data_dir: ./no-such-dir\n');
  const res = await rigd(['--config', file, 'rigs'], { env: {} });
  t.equal(res.code, 2, res.stderr.trim());
  t.match(res.stderr, new RegExp(`^rigd: data_dir ${path.join(dir, 'no-such-dir').replace(/[.]/g, '\\.')} does not exist: `));
  t.notOk(existsSync(path.join(dir, 'no-such-dir')), 'not created');
  t.end();
});

test('an existing empty data_dir is a fresh install: read-only commands answer, the database is created', async (t) => {
  const dir = path.join(tmpDir(), 'fresh');
  mkdirSync(dir);
  const res = await rigd(['rigs', '--json'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(res.code, 0, res.stderr.trim());
  t.deepEqual(JSON.parse(res.stdout), []);
  t.end();
});

test('rigd migrate and rigd user add create a data_dir that does not exist', async (t) => {
  const parent = tmpDir();
  const a = path.join(parent, 'a');
  const migrate = await rigd(['migrate'], { env: { RIGD_DATA_DIR: a } });
  t.equal(migrate.code, 0, migrate.stderr.trim());
  if (!onPostgres) t.ok(existsSync(a), 'migrate created it'); // (on PostgreSQL the database is not in it)
  const b = path.join(parent, 'b');
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env: { RIGD_DATA_DIR: b }, input: 'ana-password-1\n' });
  t.equal(add.code, 0, add.stderr.trim());
  if (!onPostgres) t.ok(existsSync(b), 'user add created it');
  const list = await rigd(['user', 'list', '--json'], { env: { RIGD_DATA_DIR: b } });
  t.equal(list.code, 0, list.stderr.trim());
  t.deepEqual(JSON.parse(list.stdout).map((u: { username: string }) => u.username), ['ana'], 'and a read-only command reads it afterwards');
  t.end();
});

test('on PostgreSQL a data_dir that does not exist does not stand for the database: read-only commands answer', async (t) => {
  if (postgresOnly(t, 'the database is in PostgreSQL, not in data_dir')) return t.end();
  const missing = path.join(tmpDir(), 'not-here');
  const res = await rigd(['rigs', '--json'], { env: { RIGD_DATA_DIR: missing } });
  t.equal(res.code, 0, res.stderr.trim());
  t.deepEqual(JSON.parse(res.stdout), []);
  t.end();
});
