// database.url: what it accepts, and its password never printed (config errors, open errors of
// `rigd migrate` and `rigd serve` when the server cannot be reached).
import net from 'node:net';
import test from 'tape';
import { loadConfig } from '../../src/config/load.ts';
import { databaseUrlProblem, isPostgresUrl, redactText, redactUrl } from '../../src/db/database-url.ts';
import { dialectNameOf } from '../../src/db/dialect/index.ts';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const PASSWORD = 'Sw0rdf1sh-x9';

/** A port on 127.0.0.1 nothing listens on (taken, then freed). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

test('database.url: empty is SQLite; postgres:// and postgresql:// are PostgreSQL; anything else is refused', (t) => {
  t.equal(databaseUrlProblem(''), null, 'empty: SQLite in data_dir');
  t.equal(databaseUrlProblem('postgres://rigd:pw@db.example:5432/rigd'), null);
  t.equal(databaseUrlProblem('postgresql://db.example/rigd?sslmode=require'), null);
  t.match(databaseUrlProblem('mysql://rigd:pw@db/rigd') ?? '', /has scheme mysql \(expected empty for SQLite in data_dir, or postgres:\/\/ \/ postgresql:\/\/\)/);
  t.match(databaseUrlProblem('not a url') ?? '', /is not a URL/);
  t.match(databaseUrlProblem('postgres://db.example/') ?? '', /names no database/);
  t.equal(dialectNameOf(''), 'sqlite');
  t.equal(dialectNameOf('postgres://db/rigd'), 'postgres');
  t.notOk(isPostgresUrl('sqlite:///x'));
  t.end();
});

test('redactUrl / redactText mask the password and nothing else', (t) => {
  t.equal(redactUrl(`postgres://rigd:${PASSWORD}@db.example:5432/rigd`), 'postgres://rigd:***@db.example:5432/rigd');
  t.equal(redactUrl('postgres://rigd@db.example/rigd'), 'postgres://rigd@db.example/rigd', 'no password: unchanged');
  t.equal(redactUrl(`postgres://db.example/rigd?password=${PASSWORD}&sslmode=require`), 'postgres://db.example/rigd?password=***&sslmode=require');
  t.equal(redactText(`connect postgres://u:${PASSWORD}@h/d failed`), 'connect postgres://u:***@h/d failed');
  t.equal(redactText(`the server said ${PASSWORD} was wrong`, PASSWORD), 'the server said *** was wrong', 'a literal secret too');
  t.end();
});

test('a bad database.url is one config line naming the key, the password masked', (t) => {
  const err = (() => {
    try {
      loadConfig({ env: { RIGD_DATABASE_URL: `mysql://rigd:${PASSWORD}@db/rigd` }, overrides: { data_dir: tmpDir() } });
      return null;
    } catch (e) {
      return e as Error;
    }
  })();
  t.ok(err, 'refused at load');
  t.match(err?.message ?? '', /^config: database\.url: "mysql:\/\/rigd:\*\*\*@db\/rigd" has scheme mysql .*\(from RIGD_DATABASE_URL\)$/, err?.message);
  t.doesNotMatch(err?.message ?? '', new RegExp(PASSWORD), 'no password');
  const ok = loadConfig({ env: { RIGD_DATABASE_URL: 'postgres://rigd@db.example/rigd', RIGD_STORAGE_DRIVER: 'minio' }, overrides: { data_dir: tmpDir() } }).config;
  t.equal(ok.database.url, 'postgres://rigd@db.example/rigd', 'RIGD_DATABASE_URL sets database.url');
  t.equal(loadConfig({ env: {}, overrides: { data_dir: tmpDir() } }).config.database.url, '', 'default: empty (SQLite)');
  t.end();
});

for (const args of [['migrate'], ['serve', '--port', '0', '--host', '127.0.0.1']]) {
  test(`rigd ${args[0]} with an unreachable server: one line naming it, the password masked, exit 1`, async (t) => {
    const port = await closedPort();
    const url = `postgres://rigd:${PASSWORD}@127.0.0.1:${port}/rigd`;
    const r = await rigd(args, { env: { RIGD_DATA_DIR: tmpDir(), RIGD_DATABASE_URL: url, RIGD_LOG_FORMAT: 'json' } });
    t.equal(r.code, 1, 'exit 1');
    t.ok(r.stderr.includes(`rigd: cannot open the database postgres://rigd:***@127.0.0.1:${port}/rigd: connection refused (ECONNREFUSED)`), r.stderr.trim());
    t.notOk(`${r.stdout}${r.stderr}`.includes(PASSWORD), 'the password appears nowhere in the output');
    t.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
}
