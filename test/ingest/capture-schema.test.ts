// Schema policy for captures, on schema rows alone (no SQLite): what a plain table or index may
// contain, and every way of calling a function that must be refused.
import test from 'tape';
import { checkHeader, CaptureRejected } from '../../src/ingest/capture-file.ts';
import { checkSchemaRow, schemaKind, tokenize } from '../../src/ingest/capture-schema.ts';

const table = (sql: string, name = 't') => checkSchemaRow({ type: 'table', name, sql });
const index = (sql: string, name = 'i') => checkSchemaRow({ type: 'index', name, sql });

test('plain tables and indexes are allowed', (t) => {
  const allowed = [
    'CREATE TABLE t (a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT NOT NULL DEFAULT \'x\', c VARCHAR(40), d DECIMAL(10, 2))',
    'CREATE TABLE "gps fixes" ("lat" REAL, [lon] REAL, `note "q"` TEXT COLLATE NOCASE)',
    'CREATE TABLE t (a INT CHECK (a > 0 AND a < 10), b TEXT CHECK (b IN (\'x\', \'y\')), c REAL DEFAULT -1.5)',
    'CREATE TABLE t (a INTEGER REFERENCES parent(id) ON DELETE CASCADE, b INT, FOREIGN KEY (b) REFERENCES other (x))',
    'CREATE TABLE t (a, b, PRIMARY KEY (a, b), UNIQUE (b)) WITHOUT ROWID',
    'CREATE TABLE t (a UNSIGNED BIG INT(8), b DEFAULT CURRENT_TIMESTAMP, c DEFAULT (1 + 2))',
    'CREATE TABLE t (a TEXT CHECK (CAST(a AS VARCHAR(10)) = a)) -- like(x) in a comment',
    "CREATE TABLE t (a TEXT DEFAULT 'randomblob(1)', /* abs(1) */ b BLOB DEFAULT x'00ff')",
    'CREATE TABLE t (a TEXT COLLATE RTRIM, b TEXT COLLATE binary)',
  ];
  for (const sql of allowed) t.equal(table(sql), null, sql);
  t.equal(index('CREATE INDEX i ON t (a, b DESC)'), null, 'plain index');
  t.equal(index('CREATE UNIQUE INDEX IF NOT EXISTS "i x" ON "t y" (a COLLATE NOCASE)'), null, 'unique index with built-in collation');
  t.equal(index('CREATE INDEX i ON t (a) WHERE a IS NOT NULL AND b IN (1, 2)'), null, 'partial index without functions');
  t.equal(checkSchemaRow({ type: 'index', name: 'sqlite_autoindex_t_1', sql: null }), null, 'automatic index');
  t.end();
});

test('every way of calling a function in a table or index is refused', (t) => {
  const refused: [string | null, RegExp][] = [
    [table('CREATE TABLE t (a TEXT CHECK (length(a) > 0))'), /table "t" calls the function "length\(\)"/],
    [table('CREATE TABLE t (a BLOB DEFAULT (randomblob(16)))'), /calls the function "randomblob\(\)"/],
    [table('CREATE TABLE t (a INT, b INT GENERATED ALWAYS AS (abs(a)) STORED)'), /calls the function "abs\(\)"/],
    [table('CREATE TABLE t (a INT CHECK ("abs"(a) > 0))'), /calls the function "abs\(\)"/],
    [table('CREATE TABLE t (a INT CHECK (a > 0 AND (zeroblob (10)) IS NOT NULL))'), /calls the function "zeroblob\(\)"/],
    [table("CREATE TABLE t (a TEXT CHECK (a LIKE 'x%'))"), /uses the LIKE operator/],
    [table("CREATE TABLE t (a TEXT CHECK (a GLOB 'x*'))"), /uses the GLOB operator/],
    [table("CREATE TABLE t (a TEXT CHECK (a REGEXP 'x'))"), /uses the REGEXP operator/],
    [table("CREATE TABLE t (a TEXT CHECK (a ->> '$.x' IS NOT NULL))"), /uses the ->> operator/],
    [table('CREATE TABLE t (a TEXT COLLATE mycoll)'), /uses collation "mycoll"/],
    [index('CREATE INDEX i ON t (upper(a))'), /index "i" calls the function "upper\(\)"/],
    [index('CREATE INDEX i ON t (a) WHERE abs(a) > 1'), /calls the function "abs\(\)"/],
    [index("CREATE INDEX i ON t (a) WHERE a LIKE 'x'"), /uses the LIKE operator/],
    [index("CREATE INDEX i ON t (a -> 'x')"), /uses the -> operator/],
  ];
  for (const [got, want] of refused) t.match(got ?? 'null (allowed)', want, String(want));
  t.end();
});

test('triggers, views, virtual tables and mislabelled rows are refused by their SQL', (t) => {
  t.match(checkSchemaRow({ type: 'trigger', name: 'tr', sql: 'CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END' }) ?? '', /trigger "tr" is not allowed/);
  t.match(checkSchemaRow({ type: 'view', name: 'v', sql: 'CREATE VIEW v AS SELECT 1' }) ?? '', /view "v" is not allowed/);
  t.match(checkSchemaRow({ type: 'table', name: 'f', sql: 'CREATE VIRTUAL TABLE f USING fts5(x)' }) ?? '', /virtual table "f" is not allowed/);
  t.match(checkSchemaRow({ type: 'table', name: 'x', sql: '  create\n temp trigger x after insert on t begin select 1; end' }) ?? '', /trigger "x"/, 'type column says table, SQL says trigger');
  t.match(checkSchemaRow({ type: 'table', name: 'x', sql: 'CREATE INDEX x ON t (a)' }) ?? '', /recorded as a table but defined as a index/);
  t.match(checkSchemaRow({ type: 'table', name: 'x', sql: null }) ?? '', /has no SQL definition/);
  t.match(checkSchemaRow({ type: 'table', name: 'x', sql: 'SELECT 1' }) ?? '', /unrecognised definition/);
  t.match(checkSchemaRow({ type: 'table', name: 'x', sql: 'CREATE TABLE x (a TEXT DEFAULT \'unterminated)' }) ?? '', /unrecognised definition/, 'unterminated string');
  t.match(checkSchemaRow({ type: 'trigger', name: 'evil\n\u0000name', sql: 'CREATE TRIGGER a BEGIN END' }) ?? '', /trigger "evil\?\?name"/, 'names are made printable');
  t.end();
});

test('tokenizer: strings, quoted identifiers, comments and operators', (t) => {
  const toks = tokenize(`CREATE TABLE "a""b" ('x''y', [c d], \`e\`, 1.5e3, x'0A', a->>b) -- f(x)\n/* g(y) */`);
  t.deepEqual(
    toks.map((x) => `${x.kind}:${x.text}`),
    ['word:CREATE', 'word:TABLE', 'quoted:a"b', 'punct:(', "string:x'y", 'punct:,', 'quoted:c d', 'punct:,', 'quoted:e', 'punct:,',
      'number:1.5e3', 'punct:,', 'blob:0A', 'punct:,', 'word:a', 'punct:->>', 'word:b', 'punct:)'],
  );
  t.equal(schemaKind('CREATE UNIQUE INDEX i ON t(a)'), 'index');
  t.equal(schemaKind('CREATE TEMPORARY VIEW v AS SELECT 1'), 'view');
  t.equal(schemaKind(null), 'unknown');
  t.end();
});

test('header checks without SQLite', (t) => {
  const header = (patch: (b: Buffer) => void = () => {}) => {
    const b = Buffer.alloc(100);
    b.write('SQLite format 3\0', 0, 'latin1');
    b.writeUInt16BE(4096, 16);
    b[18] = 1;
    b[19] = 1;
    b[21] = 64;
    b[22] = 32;
    b[23] = 32;
    b.writeUInt32BE(7, 24);
    b.writeUInt32BE(3, 28);
    b.writeUInt32BE(7, 92);
    b.writeUInt32BE(3045001, 96);
    patch(b);
    return b;
  };
  const reason = (f: () => unknown) => {
    try {
      f();
      return 'accepted';
    } catch (err) {
      return err instanceof CaptureRejected ? `${err.reason}: ${err.message}` : String(err);
    }
  };
  t.deepEqual(checkHeader(header(), 3 * 4096, 1e6), { pageSize: 4096, headerPageCount: 3, sqliteVersion: 3045001 }, 'a sane header');
  t.equal(checkHeader(header((b) => b.writeUInt16BE(1, 16)), 3 * 65536, 1e6).pageSize, 65536, 'page size 1 means 65536');
  t.match(reason(() => checkHeader(header((b) => b.writeUInt16BE(1000, 16)), 4096, 1e6)), /^not_sqlite: .*invalid page size \(1000\)/);
  t.match(reason(() => checkHeader(header((b) => b.writeUInt16BE(256, 16)), 4096, 1e6)), /^not_sqlite: .*invalid page size/);
  t.match(reason(() => checkHeader(header((b) => (b[19] = 3)), 3 * 4096, 1e6)), /^not_sqlite: .*file format version 1\/3/);
  t.match(reason(() => checkHeader(header(), 3 * 4096 + 1, 1e6)), /^truncated: .*not a whole number of 4096-byte pages/);
  t.match(reason(() => checkHeader(header(), 2 * 4096, 1e6)), /^truncated: .*header says 3 pages but the file holds 2/);
  t.equal(reason(() => checkHeader(header((b) => b.writeUInt32BE(8, 24)), 2 * 4096, 1e6)), 'accepted', 'a stale in-header page count is ignored, as SQLite does');
  t.match(reason(() => checkHeader(header(), 3 * 4096, 3 * 4096 - 1)), /^too_large: Capture is 12288 bytes, larger than the limit of 12287 bytes\./);
  t.match(reason(() => checkHeader(header().subarray(0, 10), 10, 1e6)), /^truncated: .*shorter than the 100-byte/);
  t.match(reason(() => checkHeader(Buffer.from('SQLite format 2\0'), 4096, 1e6)), /^not_sqlite/);
  t.match(reason(() => checkHeader(header(), 256, 1e6)), /^truncated/, 'smaller than 512 bytes');
  t.end();
});
