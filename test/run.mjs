#!/usr/bin/env node
// Runs every test/**/*.test.ts (or the files given), each in its own node process with tsx, up to
// RIGD_TEST_JOBS files at once (default: the CPUs this process may use, at most 4; 1 runs them one
// after another). A file that says `// test: alone (why)` runs with nothing beside it, after the
// others; two files that share a fixed resource (a network namespace subnet, a declared name: see
// test/runner/resources.mjs) never run at the same time. Each file's output is printed whole when it
// ends, after "# file N of M, elapsed Ns: path" (N: the files ended so far); the run ends with the
// failures, the slowest files and one line: "N passed, N failed, N skipped". A skipped assertion
// (t.skip, "ok N reason # SKIP") or a skipped test ({ skip: reason }, "# SKIP name reason") counts
// as skipped, never as passed. `--resources` lists what each file holds and runs nothing.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileResources } from './runner/resources.mjs';
import { schedule, startOrder } from './runner/schedule.mjs';
import { countTap } from './runner/tap.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const testRoot = path.join(root, 'test');

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'helpers' || name === 'fixtures' ? [] : find(p);
    return name.endsWith('.test.ts') || name.endsWith('.test.tsx') ? [p] : [];
  });
}

function jobsWanted() {
  const raw = process.env.RIGD_TEST_JOBS;
  if (raw === undefined || raw === '') return Math.max(1, Math.min(os.availableParallelism(), 4));
  if (!/^[1-9]\d*$/.test(raw)) {
    process.stderr.write(`test/run.mjs: RIGD_TEST_JOBS must be a whole number of files at once (1 or more), not ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return Number(raw);
}

const args = process.argv.slice(2);
const listOnly = args[0] === '--resources';
if (listOnly) args.shift();

// test/package/ builds and installs the Debian packages: nothing in it depends on the database
// engine, so the PostgreSQL run of the whole suite leaves it to the SQLite run (named files still run).
const engineFree = path.join(testRoot, 'package') + path.sep;
const files =
  args.length > 0
    ? args.map((f) => path.resolve(f))
    : find(testRoot)
        .filter((f) => !(process.env.RIGD_TEST_DATABASE_URL && f.startsWith(engineFree)))
        .sort();

const cache = new Map();
const items = files.map((file) => ({ file, rel: path.relative(root, file), ...fileResources(file, testRoot, cache) }));
if (listOnly) {
  for (const it of items) process.stdout.write(`${it.rel}: ${it.alone ? `alone (${it.why})` : it.resources.join(' ') || '-'}\n`);
  process.exit(0);
}
const order = startOrder(items);
const jobs = jobsWanted();

// With RIGD_TEST_DATABASE_URL (postgres://.../template), each file runs on a fresh PostgreSQL
// database copied from that template (RIGD_DATABASE_URL in its environment), and its data dirs'
// databases (test/helpers/dialect.ts databaseUrlFor) are copied from a template of its own, so that
// the databases of one file are dropped when it ends while other files run on.
const pgTemplate = process.env.RIGD_TEST_DATABASE_URL ? new URL(process.env.RIGD_TEST_DATABASE_URL) : null;
const templateName = pgTemplate?.pathname.slice(1);
let pgAdmin = null;
if (pgTemplate) {
  const { default: pg } = await import('pg');
  const adminUrl = new URL(pgTemplate);
  adminUrl.pathname = '/postgres';
  pgAdmin = new pg.Client({ connectionString: adminUrl.toString() });
  await pgAdmin.connect();
}
let fileNo = 0;
const likePrefix = (name) => name.replace(/[\\_%]/g, (c) => `\\${c}`) + '\\_%';

/** A file's databases: its own (RIGD_DATABASE_URL) and its template (RIGD_TEST_DATABASE_URL), or null on SQLite. */
async function freshDatabases() {
  if (!pgTemplate) return null;
  const base = `${templateName}_${process.pid}_${++fileNo}`;
  const own = `${base}_f`;
  await pgAdmin.query(`CREATE DATABASE "${base}" TEMPLATE "${templateName}"`);
  await pgAdmin.query(`CREATE DATABASE "${own}" TEMPLATE "${templateName}"`);
  const url = (name) => Object.assign(new URL(pgTemplate), { pathname: `/${name}` }).toString();
  return { base, env: { RIGD_DATABASE_URL: url(own), RIGD_TEST_DATABASE_URL: url(base), RIGD_CLUSTER_SINGLE_NODE: 'true' } };
}

async function dropDatabases(prefix, also = []) {
  const { rows } = await pgAdmin.query('SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = ANY($2)', [likePrefix(prefix), also]);
  for (const { datname } of rows) await pgAdmin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
}

let passed = 0;
let failed = 0;
let skipped = 0;
let ended = 0;
const failures = [];
const durations = [];
const started = Date.now();
// SIGINT/SIGTERM (Ctrl-C, CI's time limit): the running files are stopped, their output printed, no
// new one starts, and the run still ends with its failures and summary line.
const children = new Set();
let stoppedBy = null;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stoppedBy ??= sig;
    for (const c of children) c.kill('SIGTERM');
  });
}
const seconds = (ms) => `${Math.round(ms / 1000)}s`;

async function runFile(item) {
  if (stoppedBy) return;
  const t0 = Date.now();
  let result;
  let databases = null;
  try {
    databases = await freshDatabases();
    // On PostgreSQL the suite uses the embedded store, which rigd allows there for one node only.
    result = await runProcess(item.file, databases?.env ?? {});
  } catch (err) {
    result = { stdout: '', stderr: '', counts: { passed: 0, failed: 0, skipped: 0, failures: [] }, problem: `could not start: ${err.message}` };
  } finally {
    if (databases) {
      try {
        await dropDatabases(databases.base, [databases.base]);
      } catch (err) {
        process.stderr.write(`test/run.mjs: dropping the databases of ${item.rel}: ${err.message}\n`);
      }
    }
  }
  const { counts, problem } = result;
  passed += counts.passed;
  failed += counts.failed + (problem ? 1 : 0);
  skipped += counts.skipped;
  failures.push(...counts.failures.map((f) => `${item.rel}: ${f}`));
  if (problem) failures.push(`${item.rel}: ${problem}`);
  durations.push({ rel: item.rel, ms: Date.now() - t0 });
  process.stdout.write(`# file ${++ended} of ${files.length}, elapsed ${seconds(Date.now() - started)}: ${item.rel}\n${result.stdout}`);
  if (result.stderr) process.stderr.write(result.stderr);
}

/** Runs one file to its end: its output (whole), its counts, and what went wrong beyond failed assertions. */
function runProcess(file, extraEnv) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      // As bin/rigd does: the in-process servers of the tests get the same thread pool as `rigd serve`
      // (libuv sizes it before a test file's first line runs, so only the parent can set it).
      env: { UV_THREADPOOL_SIZE: '16', ...process.env, ...extraEnv, FORCE_COLOR: '0' },
    });
    children.add(child);
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      children.delete(child);
      const stdout = Buffer.concat(out).toString('utf8');
      const counts = countTap(stdout);
      const seen = counts.passed + counts.failed + counts.assertionsSkipped;
      let problem = null;
      if ((code !== 0 || signal) && counts.failed === 0) problem = `exited with ${signal ?? code} after ${counts.passed} passing assertions`;
      else if (counts.planned !== null && counts.planned !== seen) problem = `planned ${counts.planned} assertions, saw ${seen}`;
      else if (counts.planned === null && code === 0) problem = 'ended without a TAP plan';
      resolve({ stdout: stdout.endsWith('\n') || stdout === '' ? stdout : `${stdout}\n`, stderr: Buffer.concat(err).toString('utf8'), counts, problem });
    });
  });
}

await schedule(order, jobs, runFile);
if (pgAdmin) {
  await dropDatabases(templateName);
  await pgAdmin.end();
}
if (stoppedBy) {
  failed++;
  failures.push(`the run was stopped by ${stoppedBy}: ${files.length - ended} of ${files.length} files did not run`);
}
if (failures.length) {
  process.stdout.write('\n# failures:\n' + failures.map((f) => `#   ${f}`).join('\n') + '\n');
}
if (files.length > 1) {
  const slowest = durations.sort((a, b) => b.ms - a.ms).slice(0, 10);
  process.stdout.write('\n# slowest files:\n' + slowest.map((d) => `#   ${seconds(d.ms).padStart(5)} ${d.rel}`).join('\n') + '\n');
}
const own = durations.reduce((sum, d) => sum + d.ms, 0);
process.stdout.write(`\n# ${files.length} file${files.length === 1 ? '' : 's'} in ${seconds(Date.now() - started)} (${jobs} at once; the files' own times add up to ${seconds(own)})\n`);
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exitCode = failed === 0 && passed + skipped > 0 ? 0 : 1;
