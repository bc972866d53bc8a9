// One door to the database: outside src/db no code imports Sequelize, holds SQL text or checks
// which engine it runs on; inside src/db only the dialect seam (src/db/dialect/) names an engine,
// and neither of its halves imports the other. Engine-free (it reads src/): runs alike on both
// engines.
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

const files = sources(path.join(ROOT, 'src')).map((file) => ({ file: path.relative(ROOT, file).split(path.sep).join('/'), text: readFileSync(file, 'utf8') }));

/** `file: line` (the line trimmed) of every match of re (a global regexp) in the files `only` keeps. */
function hits(re: RegExp, only: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const { file, text } of files) {
    if (!only(file)) continue;
    const lines = text.split('\n');
    const seen = new Set<number>();
    for (const m of text.matchAll(re)) {
      // The line the match ends on names it (a template literal may open on the line before its SQL).
      const line = text.slice(0, (m.index ?? 0) + m[0].length).split('\n').length - 1;
      if (seen.has(line)) continue;
      seen.add(line);
      out.push(`${file}: ${lines[line].trim()}`);
    }
  }
  return out;
}

const SQL_WORDS = 'SELECT|INSERT|UPDATE|DELETE|WITH|PRAGMA|CREATE|ALTER|DROP|ATTACH|DETACH|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|VACUUM|TRUNCATE|REINDEX|ANALYZE|EXPLAIN|LISTEN|UNLISTEN|NOTIFY|COPY|LOCK|SET|SHOW';

/** What only src/db may hold. */
const OUTSIDE: [string, RegExp, string[]][] = [
  [
    'an import of Sequelize',
    /from\s+['"]sequelize['"]|import\(\s*['"]sequelize['"]\s*\)|require\(\s*['"]sequelize['"]\s*\)/g,
    ["import type { Transaction } from 'sequelize';", "const { Sequelize } = await import('sequelize');"],
  ],
  [
    'SQL text',
    // A string or template literal whose text starts with a statement's first word (a lone word
    // only for the statements that stand alone: 'DELETE' alone is an HTTP method).
    new RegExp(`[\`'"]\\s*(${SQL_WORDS})(?=[\\s(;*])|[\`'"](BEGIN|COMMIT|ROLLBACK|VACUUM|ANALYZE|REINDEX)[\`'"]`, 'g'),
    ["const sql = 'SELECT 1';", 'await db.query(`\n  UPDATE jobs SET state = 1`);', 'await q("PRAGMA quick_check");', "run('BEGIN IMMEDIATE')"],
  ],
  [
    'an engine check',
    /\bdialect\s*[!=]==?|\.dialect\b|\bgetDialect\b|\bisPostgres|\bisSqlite|\bdialectNameOf\b|\bQueryTypes\b|\bOp\.|[!=]==?\s*['"](postgres|postgresql|sqlite)['"]|['"](postgres|postgresql|sqlite)['"]\s*[!=]==?|case\s+['"](postgres|sqlite)['"]|startsWith\(\s*['"]postgres|\bforEngine\b|\bengineOf\b/g,
    [
      "if (db.dialect.name === 'postgres') {",
      'if (isPostgresUrl(config.database.url)) {',
      "const pg = engine === 'postgres';",
      "if (sequelize.getDialect() !== 'sqlite') return;",
      "if (url.startsWith('postgres')) {",
      'where: { id: { [Op.lt]: 5 } }',
      "const lock = forEngine(engine, { postgres: ' FOR UPDATE', sqlite: '' });",
    ],
  ],
];

/** Inside src/db, outside the dialect seam: naming an engine. */
const ENGINE_NAME: RegExp = /[!=]==?\s*['"](postgres|postgresql|sqlite)['"]|['"](postgres|postgresql|sqlite)['"]\s*[!=]==?|case\s+['"](postgres|sqlite)['"]/g;
const ENGINE_NAME_SAMPLES = ["if (db.dialect.name === 'postgres') return;", "return engine === 'sqlite' ? a : b;", "if ('postgres' !== sequelize.getDialect()) {", "case 'sqlite':"];

/** One half of the dialect seam importing the other. */
const CROSS: [string, RegExp][] = [
  ['src/db/dialect/postgres/', /(from\s+|import\(\s*)['"][^'"]*\/sqlite\/[^'"]*['"]/g],
  ['src/db/dialect/sqlite/', /(from\s+|import\(\s*)['"][^'"]*\/postgres\/[^'"]*['"]/g],
];

/**
 * Areas whose move into src/db is under way elsewhere: their hits are listed here (`file: line`)
 * and reported, not failed. An unlisted hit there fails like any other. Emptied when that work
 * is merged.
 */

const inDb = (file: string) => file.startsWith('src/db/');

test('outside src/db: no Sequelize, no SQL text, no engine check', (t) => {
  for (const [what, re] of OUTSIDE) t.deepEqual(hits(re, (file) => !inDb(file)), [], `${what}: none outside src/db`);
  t.end();
});

test('inside src/db: only the dialect seam names an engine', (t) => {
  t.deepEqual(hits(ENGINE_NAME, (file) => inDb(file) && !file.startsWith('src/db/dialect/')), [], `no engine named outside src/db/dialect/ (${ENGINE_NAME})`);
  t.end();
});

test('neither half of the dialect seam imports the other', (t) => {
  for (const [dir, re] of CROSS) t.deepEqual(hits(re, (file) => file.startsWith(dir)), [], `${dir} imports nothing of the other engine`);
  t.end();
});

test('the patterns find what they look for (a grep that cannot fail is no check)', (t) => {
  const matches = (re: RegExp, sample: string) => new RegExp(re.source, re.flags.replace('g', '')).test(sample);
  for (const [what, re, samples] of OUTSIDE) for (const s of samples) t.ok(matches(re, s), `${what}: matches ${JSON.stringify(s)}`);
  for (const s of ENGINE_NAME_SAMPLES) t.ok(matches(ENGINE_NAME, s), `engine named: matches ${JSON.stringify(s)}`);
  t.ok(matches(CROSS[0][1], "import { driver } from '../sqlite/driver.ts';"), 'postgres half importing the sqlite half: matches');
  t.ok(matches(CROSS[1][1], "const m = await import('../postgres/listener.ts');"), 'sqlite half importing the postgres half: matches');
  // And they leave alone what is no database work.
  const clean = ["method: 'DELETE',", "t.comment('Update the rig list');", "const label = 'Set the rig name';", 'const DIALECT = loadDialect(url);'];
  for (const [what, re] of OUTSIDE) for (const s of clean) t.notOk(matches(re, s), `${what}: leaves ${JSON.stringify(s)} alone`);
  t.end();
});
