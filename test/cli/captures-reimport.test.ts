// Rebuilding the capture store, exactly as an operator is told to: captures ingested by a child
// `rigd serve`; `rigd ingest KEY --force` imports one again (its rows replaced, not doubled); then the
// store is lost (SQLite: the file removed; PostgreSQL: the schema dropped) while rigd is stopped,
// `rigd doctor` and /healthz name the captures whose rows are missing, `rigd captures reimport --all
// --wait` rebuilds, and every export (CSV and NDJSON) is byte for byte what it was before.
import { rmSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { captureStorePath } from '../../src/db/capture-store/layout.ts';
import { CAPTURE_STORE_SCHEMA } from '../../src/db/capture-store/postgres-schema.ts';
import { countRows } from '../helpers/capture-store.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { captureRow, put } from '../helpers/data-dir-captures.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { writeCaptureFile, type SeedTable } from '../helpers/seed-capture.ts';
import { tmpDir } from '../helpers/tmp.ts';

const files = tmpDir();
const dataDir = tmpDir();
// rows_check_s 1: /healthz counts again a second after its last count.
const env = { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_CAPTURES_ROWS_CHECK_S: '1' };

const readings: SeedTable = {
  name: 'readings',
  columns: [
    { name: 'serial', type: 'TEXT' },
    { name: 'v', type: 'REAL' },
    { name: 'n', type: 'INTEGER' },
    { name: 'raw', type: 'BLOB' },
  ],
  rows: Array.from({ length: 300 }, (_, i) => [`00${i}`, i / 7, 2 ** 40 + i, i % 5 === 0 ? null : Buffer.from([i % 256, 0, 255])]),
};
const notes: SeedTable = { name: 'notes', columns: [{ name: 'txt', type: 'TEXT' }], rows: [['a, "quoted"\nline'], ['été'], [null]] };
const CAPTURES: Record<string, SeedTable[]> = {
  'rig1/a.sqlite': [readings, notes],
  'rig2/b.sqlite': [{ ...readings, rows: readings.rows.slice(0, 40) }],
  'rig3/empty.sqlite': [{ name: 'notes', columns: [{ name: 'txt', type: 'TEXT' }], rows: [] }],
};

let server: ServeProcess;
const ids = new Map<string, number>();
const before = new Map<string, string>();

async function exportAll(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [key, tables] of Object.entries(CAPTURES)) {
    for (const t of tables) {
      for (const format of ['csv', 'ndjson']) {
        const r = await rigd(['captures', 'export', String(ids.get(key)), t.name, '--format', format], { env, timeoutMs: 60_000 });
        if (r.code !== 0) throw new Error(`export ${key} ${t.name}: ${r.stderr}`);
        out.set(`${key} ${t.name} ${format}`, r.stdout);
      }
    }
  }
  return out;
}

async function doctorLine(): Promise<{ status: string; message: string; fix?: string }> {
  const r = await rigd(['doctor', '--json'], { env, timeoutMs: 60_000 });
  return JSON.parse(r.stdout).checks.find((c: { check: string }) => c.check === 'capture_rows');
}

const healthz = async () => {
  const r = await http(`${server.url}/healthz`);
  return { status: r.status, body: r.json() };
};

test('setup: three captures ingested by rigd serve, exported', async (t) => {
  for (const [key, tables] of Object.entries(CAPTURES)) {
    const file = path.join(files, key.replace('/', '_'));
    await writeCaptureFile(file, tables);
    await put(dataDir, key, file);
  }
  server = await serveProcess(env);
  for (const key of Object.keys(CAPTURES)) {
    const r = await rigd(['ingest', key, '--wait', '--json'], { env, timeoutMs: 120_000 });
    t.equal(r.code, 0, `${key} ingested ${r.stderr}`);
    ids.set(key, JSON.parse(r.stdout).id);
  }
  for (const [k, v] of await exportAll()) before.set(k, v);
  t.match(before.get('rig1/a.sqlite readings csv')!, /^serial,v,n,raw\r\n000,0\.0,1099511627776,\r\n001,0\.14285714285714285,/, 'exports hold the values as stored (the real 0 as 0.0: a real stays a real)');
  const line = await doctorLine();
  t.equal(line.status, 'ok', `doctor: capture_rows ok (${line.message})`);
  t.match(line.message, /all 3 ingested capture\(s\) have their rows/, 'says what it checked');
});

test('rigd ingest KEY --force imports an ingested capture again; without --force nothing happens', async (t) => {
  const key = 'rig1/a.sqlite';
  const jobs = (await captureRow(dataDir, key))!.jobs;
  const plain = await rigd(['ingest', key, '--wait'], { env, timeoutMs: 60_000 });
  t.equal(plain.code, 0, 'without --force: exit 0');
  t.match(plain.stdout, /is already ingested \(--force imports it again\)/, 'says it is ingested and how to import it again');
  t.equal((await captureRow(dataDir, key))!.jobs, jobs, 'no job queued');

  const forced = await rigd(['ingest', key, '--force', '--wait'], { env, timeoutMs: 120_000 });
  t.equal(forced.code, 0, `--force --wait: exit 0 ${forced.stderr}`);
  t.match(forced.stdout, new RegExp(`^capture ${ids.get(key)} \\(rig1/a\\.sqlite\\) queued again\\n`), 'queued again, the same capture');
  t.match(forced.stdout, /ingested: 2 tables, 303 rows/, 'ingested again');
  const row = (await captureRow(dataDir, key))!;
  t.deepEqual([row.jobs, row.count, row.state], [jobs + 1, 1, 'ingested'], 'one new job, still one capture, ingested');
  t.equal(await countRows(dataDir, 'readings', ids.get(key)!), 300, 'its rows replaced, not doubled');
  const again = await exportAll();
  t.deepEqual([...again], [...before], 'every export as before');
});

test('the store is lost: doctor and /healthz name the captures; reimport --all --wait rebuilds; exports equal', async (t) => {
  t.equal(await server.stop(), 0, 'rigd stopped');
  if (onPostgres) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: databaseUrlFor(dataDir) });
    await client.connect();
    await client.query(`DROP SCHEMA ${CAPTURE_STORE_SCHEMA} CASCADE`);
    await client.end();
  } else {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${captureStorePath(dataDir)}${suffix}`, { force: true });
  }
  server = await serveProcess(env);

  const line = await doctorLine();
  t.equal(line.status, 'fail', 'doctor: capture_rows fails');
  const [a, b] = [ids.get('rig1/a.sqlite'), ids.get('rig2/b.sqlite')];
  t.match(line.message, new RegExp(`^2 ingested capture\\(s\\) have rows missing from the capture store: capture ${a} \\(readings: 0 of 300 rows, notes: 0 of 3 rows\\), capture ${b} \\(readings: 0 of 40 rows\\)$`), 'names each capture and table (the empty capture is not missing anything)');
  t.match(line.fix ?? '', /rigd captures reimport --all --wait/, 'and the command that rebuilds');
  const sick = await healthz();
  t.equal(sick.status, 503, '/healthz: 503');
  t.deepEqual(sick.body.failing, ['capture_rows'], 'naming capture_rows only');
  t.match(sick.body.checks.capture_rows, /2 ingested capture\(s\) have rows missing/, 'with what is missing');

  const r = await rigd(['captures', 'reimport', '--all', '--wait'], { env, timeoutMs: 180_000 });
  t.equal(r.code, 0, `reimport --all --wait: exit 0 ${r.stderr}`);
  for (const [key, id] of ids) t.match(r.stdout, new RegExp(`^capture ${id} \\(${key.replace('.', '\\.')}\\) queued again$`, 'm'), `prints capture ${id} as queued`);
  t.match(r.stdout, /^3 capture\(s\) queued; rigd serve imports them\n(.*\n)*3\/3 ingested\n$/m, 'counts them and waits until all are ingested');

  const after = await exportAll();
  t.deepEqual([...after], [...before], 'every export, CSV and NDJSON, equal to before');
  t.equal((await doctorLine()).status, 'ok', 'doctor: capture_rows ok again');
  const healthy = await waitFor(async () => ((await healthz()).status === 200 ? true : null), 60_000, '/healthz to count again');
  t.ok(healthy, '/healthz: 200 once it counts again');
});

test('reimport refuses to guess: no selection is a usage error; an empty selection queues nothing', async (t) => {
  const none = await rigd(['captures', 'reimport'], { env });
  t.deepEqual([none.code, none.stderr], [2, 'rigd: say which captures: --all, --rig ID or --since T\n'], 'no selection: exit 2, one line');
  const bad = await rigd(['captures', 'reimport', '--since', 'yesterday'], { env });
  t.equal(bad.code, 2, 'a --since that is no time: exit 2');
  t.match(bad.stderr, /^rigd: --since must be an ISO 8601 time such as 2026-11-01T00:00Z or a duration such as 24h or 7d, got "yesterday"\n$/, 'one line naming both forms --since takes');
  const badDate = await rigd(['captures', 'reimport', '--since', '2026-13-45'], { env });
  t.deepEqual([badDate.code, badDate.stderr.split('\n')[0]], [2, badDate.stderr.trim()], 'a date that is no date: exit 2, one line');
  t.match(badDate.stderr, /^rigd: --since must be an ISO 8601 time such as .* got "2026-13-45"/, 'the same words');
  const future = await rigd(['captures', 'reimport', '--since', '2099-01-01T00:00:00Z', '--json'], { env });
  t.deepEqual([future.code, JSON.parse(future.stdout)], [0, []], 'nothing imported since then: nothing queued, [] with --json');
  const rig = await rigd(['captures', 'reimport', '--rig', 'nobody'], { env });
  t.equal(rig.stdout, 'no ingested capture matches: nothing queued\n', 'an unknown rig: nothing queued, said plainly');
});

test('teardown', async (t) => {
  t.equal(await server.stop(), 0, 'rigd serve exits 0');
});
