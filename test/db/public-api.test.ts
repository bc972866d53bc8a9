// The database code uses Sequelize, sqlite3 and pg by their public APIs only, so that an upgrade
// within Sequelize 6 cannot break the write path silently: no patched connection manager, no raw
// connection read off a transaction, no query generator, no QueryInterface built by its
// constructor, no SQL comment that steers the driver. Engine-free (it reads src/): runs alike on
// both engines.
import test from 'tape';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli.ts';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.tsx?$/.test(name) ? [p] : [];
  });
}

const files = sources(path.join(ROOT, 'src')).map((file) => ({ file: path.relative(ROOT, file), lines: readFileSync(file, 'utf8').split('\n') }));

/** file:line of every line of files matching re. */
function hits(re: RegExp, only?: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const { file, lines } of files) {
    if (only && !only(file)) continue;
    lines.forEach((line, i) => {
      if (re.test(line)) out.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

/** Private parts of Sequelize (and the tricks around them) the code must not reach. */
const PRIVATE: [string, RegExp][] = [
  ['the connection manager', /connectionManager/],
  ['getConnection', /\bgetConnection\b/],
  ['releaseConnection', /\breleaseConnection\b/],
  ['destroyConnection', /\bdestroyConnection\b/],
  ['takeOpenWriter', /\btakeOpenWriter\b/],
  ['bulkInsertQuery', /\bbulkInsertQuery\b/],
  ['the query generator', /\bqueryGenerator\b/],
  ['a QueryInterface built by its constructor', /new\s+QueryInterface\b|QueryInterface[^;\n]*\.constructor\b|\bqi\.constructor\b/],
  ['the raw connection of a transaction', /\b(t|tx|transaction)\.connection\b|\b(t|tx|transaction)\s+as\s+unknown\s+as\s*\{\s*connection/],
  ['a SQL comment that steers the driver', /\/\*\s*bulk insert\s*\*\/|[`'"]\s*\/\*[^`'"]*\*\/\s*(INSERT|\$\{)/i],
];

test('src/ reaches no private part of Sequelize', (t) => {
  for (const [what, re] of PRIVATE) t.deepEqual(hits(re), [], `no ${what} (${re})`);
  t.end();
});

test('the patterns find what they look for (a grep that cannot fail is no check)', (t) => {
  const samples: Record<string, string> = {
    'the connection manager': 'const cm = sequelize.connectionManager as unknown as Cm;',
    getConnection: 'await cm.getConnection({ uuid: "x" });',
    releaseConnection: 'cm.releaseConnection(conn);',
    destroyConnection: 'cm.destroyConnection = async () => {};',
    takeOpenWriter: 'cm.takeOpenWriter?.()',
    bulkInsertQuery: 'generator.bulkInsertQuery(table, rows, {}, attrs)',
    'the query generator': 'const g = qi.queryGenerator as G;',
    'a QueryInterface built by its constructor': 'const Ctor = qi.constructor as new (s: Sequelize) => QueryInterface;',
    'the raw connection of a transaction': 'const conn = (t as unknown as { connection?: Raw }).connection;',
    'a SQL comment that steers the driver': 'await sequelize.query(`/* bulk insert */ ${sql} RETURNING id`);',
  };
  for (const [what, re] of PRIVATE) t.ok(re.test(samples[what]), `${what}: its pattern matches a sample`);
  t.end();
});

/** Service concepts whose database work is all in src/db: no Sequelize, no engine check. */
const ENGINE_FREE_SERVICES = ['src/services/rigs/', 'src/services/auth/', 'src/services/uploads/', 'src/services/captures/', 'src/services/alerts/', 'src/services/metrics/', 'src/services/notify/', 'src/services/app.ts'];
const ENGINE = /sequelize|QueryTypes|dialect ===|dialect\.name|isPostgres/;

test('services of the finished concepts import nothing from Sequelize and check no engine', (t) => {
  for (const dir of ENGINE_FREE_SERVICES) t.deepEqual(hits(ENGINE, (file) => file.startsWith(dir)), [], `${dir}: no ${ENGINE}`);
  t.ok(ENGINE.test("import type { Transaction } from 'sequelize';") && ENGINE.test("if (db.dialect.name === 'postgres')"), 'the pattern matches a sample');
  t.end();
});
