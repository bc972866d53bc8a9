#!/usr/bin/env node
// Runs every test/**/*.test.ts (or the files given), one file after another, each in its own node
// process with tsx; streams the TAP output, prints "# file N of M, elapsed Ns: path" before each
// file, and ends with one line: "N passed, N failed, N skipped". A skipped assertion (t.skip,
// "ok N reason # SKIP") or a skipped test ({ skip: reason }, "# SKIP name reason") counts as
// skipped, never as passed.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'helpers' || name === 'fixtures' ? [] : find(p);
    return name.endsWith('.test.ts') || name.endsWith('.test.tsx') ? [p] : [];
  });
}

// test/package/ builds and installs the Debian packages: nothing in it depends on the database
// engine, so the PostgreSQL run of the whole suite leaves it to the SQLite run (named files still run).
const engineFree = path.join(root, 'test', 'package') + path.sep;
const files =
  process.argv.length > 2
    ? process.argv.slice(2).map((f) => path.resolve(f))
    : find(path.join(root, 'test'))
        .filter((f) => !(process.env.RIGD_TEST_DATABASE_URL && f.startsWith(engineFree)))
        .sort();
// With RIGD_TEST_DATABASE_URL (postgres://.../template), each file runs on a fresh PostgreSQL
// database copied from that template (RIGD_DATABASE_URL in its environment), dropped afterwards.
const pgTemplate = process.env.RIGD_TEST_DATABASE_URL ? new URL(process.env.RIGD_TEST_DATABASE_URL) : null;
let pgAdmin = null;
if (pgTemplate) {
  const { default: pg } = await import('pg');
  const adminUrl = new URL(pgTemplate);
  adminUrl.pathname = '/postgres';
  pgAdmin = new pg.Client({ connectionString: adminUrl.toString() });
  await pgAdmin.connect();
}
let fileNo = 0;

/** A fresh database for one test file, as RIGD_DATABASE_URL, or null on SQLite. */
async function freshDatabase() {
  if (!pgTemplate) return null;
  const template = pgTemplate.pathname.slice(1);
  const name = `${template}_${process.pid}_${++fileNo}`;
  await pgAdmin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  const url = new URL(pgTemplate);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];

async function runFile(file) {
  const database = await freshDatabase();
  try {
    // On PostgreSQL the suite uses the embedded store, which rigd allows there for one node only.
    await runProcess(file, database ? { RIGD_DATABASE_URL: database.url, RIGD_CLUSTER_SINGLE_NODE: 'true' } : {});
  } finally {
    if (database) {
      // The file's database and those of its data dirs (test/helpers/dialect.ts databaseUrlFor).
      const template = pgTemplate.pathname.slice(1);
      const { rows } = await pgAdmin.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${template}\\_%`]);
      for (const { datname } of rows) await pgAdmin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  }
}

const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)}s`;

function runProcess(file, extraEnv) {
  return new Promise((resolve) => {
    const rel = path.relative(root, file);
    process.stdout.write(`# file ${files.indexOf(file) + 1} of ${files.length}, elapsed ${elapsed()}: ${rel}\n`);
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
      // As bin/rigd does: the in-process servers of the tests get the same thread pool as `rigd serve`
      // (libuv sizes it before a test file's first line runs, so only the parent can set it).
      env: { UV_THREADPOOL_SIZE: '16', ...process.env, ...extraEnv, FORCE_COLOR: '0' },
    });
    let buf = '';
    let filePassed = 0;
    let fileFailed = 0;
    let fileSkipped = 0; // skipped assertions: in the plan
    let testsSkipped = 0; // skipped tests: a comment, not in the plan
    let planned = null;
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (/^ok \d+.*# skip\b/i.test(line)) fileSkipped++;
        else if (/^# skip\b/i.test(line)) testsSkipped++;
        else if (/^ok \d+/.test(line)) filePassed++;
        else if (/^not ok \d+/.test(line)) {
          fileFailed++;
          failures.push(`${rel}: ${line}`);
        } else if (/^1\.\.(\d+)$/.test(line)) planned = Number(line.slice(3));
      }
    });
    child.on('close', (code, signal) => {
      passed += filePassed;
      failed += fileFailed;
      skipped += fileSkipped + testsSkipped;
      if ((code !== 0 || signal) && fileFailed === 0) {
        failed++;
        failures.push(`${rel}: exited with ${signal ?? code} after ${filePassed} passing assertions`);
      } else if (planned !== null && planned !== filePassed + fileFailed + fileSkipped) {
        failed++;
        failures.push(`${rel}: planned ${planned} assertions, saw ${filePassed + fileFailed + fileSkipped}`);
      } else if (planned === null && code === 0) {
        failed++;
        failures.push(`${rel}: ended without a TAP plan`);
      }
      resolve();
    });
  });
}

for (const file of files) await runFile(file);
if (pgAdmin) await pgAdmin.end();
if (failures.length) {
  process.stdout.write('\n# failures:\n' + failures.map((f) => `#   ${f}`).join('\n') + '\n');
}
process.stdout.write(`\n# ${files.length} file${files.length === 1 ? "" : "s"} in ${elapsed()}\n`);
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exitCode = failed === 0 && passed + skipped > 0 ? 0 : 1;
