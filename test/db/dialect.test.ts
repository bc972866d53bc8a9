// The Dialect contract, on a real database: what src/db's domain writes rely on, whichever engine
// runs underneath (SQLite, or PostgreSQL under npm run test:pg).
import test from 'tape';
import { dialectNameOf, loadDialect } from '../../src/db/dialect/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { insertReservations } from '../../src/db/reservations.ts';
import { readBindings, storeRigReports, type ReportRow } from '../../src/db/rigs.ts';
import { QueryTypes } from 'sequelize';
import { tmpDir } from '../helpers/tmp.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';

function rigRow(id: string, at: Date, serial: string) {
  return {
    id,
    serial,
    lan_ip: null,
    vpn_address: '10.144.50.2',
    version: '1.0',
    branch: 'main',
    latitude: null,
    longitude: null,
    last_seen_at: at,
    current_project: null,
    created_at: at,
    updated_at: at,
  };
}

test('the chosen dialect is the one the database runs on', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    t.equal(db.dialect, await loadDialect(), 'Database.dialect is the chosen one');
    t.equal(db.dialect.name, dialectNameOf(), 'the engine database.url (RIGD_DATABASE_URL) selects');
    await db.ping();
    await db.probeWrite();
    t.equal(db.writes.health.failing, null, 'the write probe committed');
  } finally {
    await db.close();
  }
});

test('bulkInsertIds: the new ids in row order; an empty batch inserts nothing', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const expires = new Date(Date.now() + 60_000);
    const rows = ['a', 'b', 'c'].map((k, i) => ({ rig_id: null, peer_address: '10.144.50.2', key: `r/${k}`, expected_size: i + 1, project: null, url_expires_at: expires, next_check_at: null }));
    const first = await db.writes.run((tx) => insertReservations(db, rows, tx));
    const second = await db.writes.run((tx) => insertReservations(db, rows.slice(0, 2), tx));
    t.equal(first.length, 3, 'one id per row');
    t.ok(first.every((id, i) => i === 0 || id > first[i - 1]), `ascending: ${first.join(', ')}`);
    t.ok(second[0] > first[2], 'a later batch gets later ids');
    const stored = await db.reader.all<{ id: number; key: string; expected_size: number; state: string }>('SELECT id, key, expected_size, state FROM uploads ORDER BY id');
    t.deepEqual(
      stored.slice(0, 3).map((r) => [r.id, r.key, r.expected_size, r.state]),
      first.map((id, i) => [id, rows[i].key, rows[i].expected_size, 'reserved']),
      'each id names the row it was returned for',
    );
    t.deepEqual(await db.writes.run((tx) => db.dialect.bulkInsertIds(db.models.Upload, [], tx)), [], 'empty: no ids');
    t.equal(stored.length, 5, 'nothing else was stored');
  } finally {
    await db.close();
  }
});

test('insertRows: bound values; dates stored as bulkInsert stores them; ON CONFLICT updates only the update columns', async (t) => {
  const db = await openDatabase(tmpDir());
  try {
    const t0 = new Date('2026-11-20T10:00:00.007Z');
    const t1 = new Date('2026-11-21T10:00:00Z');
    const cols = ['id', 'serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'current_project', 'created_at', 'updated_at'];
    const values = (r: ReturnType<typeof rigRow>) => cols.map((c) => r[c as keyof typeof r]);
    await db.writes.run((tx) => db.dialect.bulkInsert(db.models.Rig, [rigRow('ref', t0, "S-'ref")], tx));
    await db.writes.run((tx) => db.dialect.insertRows(db.models.Rig, cols, [values(rigRow('rig1', t0, "S-'1")), values({ ...rigRow('rig2', t0, 'S-2'), latitude: 47.5 } as never)], tx));
    const text = await db.reader.all<{ id: string; serial: string; last_seen_at: string; latitude: number | null }>('SELECT id, serial, last_seen_at, latitude FROM rigs ORDER BY id');
    t.deepEqual(
      text.map((r) => [r.id, r.serial, r.last_seen_at, r.latitude]),
      [
        ['ref', "S-'ref", text[0].last_seen_at, null],
        ['rig1', "S-'1", text[0].last_seen_at, null],
        ['rig2', 'S-2', text[0].last_seen_at, 47.5],
      ],
      'the same stored date text as bulkInsert; quotes and numbers as given',
    );
    if (db.dialect.name === 'postgres') t.equal(new Date(text[0].last_seen_at).getTime(), t0.getTime(), 'the stored time (timestamptz)');
    else t.equal(text[0].last_seen_at, '2026-11-20 10:00:00.007 +00:00', 'the stored form');
    await db.writes.run((tx) => db.models.Rig.update({ current_project: 'p1' }, { where: { id: 'rig1' }, transaction: tx }));
    const update = { conflict: ['id'], update: ['serial', 'last_seen_at'] };
    await db.writes.run((tx) => db.dialect.insertRows(db.models.Rig, cols, [values({ ...rigRow('rig1', t1, 'S-1b'), version: 'not updated' }), values(rigRow('rig3', t1, 'S-3'))], tx, update));
    const rigs = await db.reader.all<{ id: string; serial: string; version: string; current_project: string | null; last_seen_at: string }>('SELECT id, serial, version, current_project, last_seen_at FROM rigs ORDER BY id');
    t.deepEqual(
      rigs.map((r) => [r.id, r.serial, r.version, r.current_project, new Date(r.last_seen_at).toISOString()]),
      [
        ['ref', "S-'ref", '1.0', null, t0.toISOString()],
        ['rig1', 'S-1b', '1.0', 'p1', t1.toISOString()],
        ['rig2', 'S-2', '1.0', null, t0.toISOString()],
        ['rig3', 'S-3', '1.0', null, t1.toISOString()],
      ],
      'rig1: serial and last_seen_at updated, the rest kept; rig3 inserted',
    );
    await db.writes.run((tx) => db.dialect.insertRows(db.models.Rig, cols, [], tx));
    t.equal((await db.reader.all('SELECT id FROM rigs')).length, 4, 'no rows: nothing inserted');
  } finally {
    await db.close();
  }
});

test('insertRows stores every value as binding it would: fractions to the last bit, long fractions, integers, odd text', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const at = new Date('2026-11-24T10:00:00.123Z');
    // SQLite's own decimal parser gets the first three wrong by one unit in the last place; then the
    // smallest subnormal, a subnormal, the largest double and integers beyond 2^53.
    const fixed = [39.884131, 15.805091, -6.591974, 47.376887, 8.541694, 0.1, -0.5, 0.30000000000000004, 166.1094502346035, 1e-7, 47, -180, 0, null, 5e-324, -2.5e-310, 1.7976931348623157e308, 2 ** 60, -(2 ** 53) - 2];
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const values = [...fixed, ...Array.from({ length: 600 }, (_, i) => Number(((random() - 0.5) * 360).toFixed(1 + (i % 9))))];
    const texts = ["S-'1", 'é😀"\\', '\ud800x', 'plain'];
    const cols = ['id', 'serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'current_project', 'created_at', 'updated_at'];
    const row = (i: number, latitude: number | null, longitude: number | null, serial: string) => {
      const r: Record<string, unknown> = { ...rigRow(`rig${i}`, at, serial), latitude, longitude };
      return cols.map((c) => r[c] as string | number | null | Date);
    };
    // One batch that JSON carries, one with a value it cannot (17 significant digits), one with a lone surrogate.
    const batches = [
      values.slice(0, 300).map((v, i) => row(i, v, values[(i + 7) % values.length], texts[i % 2])),
      values.slice(300).map((v, i) => row(300 + i, v, i === 5 ? 0.1234567890123456 : values[i], 'x')),
      [row(1000, 39.884131, -6.591974, texts[2])],
    ];
    for (const batch of batches) await db.writes.run((tx) => db.dialect.insertRows(db.models.Rig, cols, batch, tx));
    const stored = await db.reader.all<{ id: string; serial: string; latitude: number | null; longitude: number | null }>('SELECT id, serial, latitude, longitude FROM rigs');
    const byId = new Map(stored.map((r) => [r.id, r]));
    const wrong = batches.flat().filter((r) => {
      const s = byId.get(r[0] as string);
      return !s || s.latitude !== r[6] || s.longitude !== r[7] || s.serial !== (r[1] as string).replace(/\p{Cs}/gu, '\ufffd');
    });
    t.equal(stored.length, batches.flat().length, 'every row stored');
    t.deepEqual(wrong.map((r) => [r[0], r[1], r[6], r[7], byId.get(r[0] as string)]), [], 'each number read back is the double given, each text the text given (a lone surrogate as U+FFFD)');
    const last = await db.reader.all<{ last_seen_at: string }>("SELECT last_seen_at FROM rigs WHERE id = 'rig0'");
    t.equal(new Date(last[0].last_seen_at).getTime(), at.getTime(), 'dates stored as dates');
  } finally {
    await db.close();
  }
});

test('storeRigReports: each rig takes its latest report of the batch; every report is history', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const report = (rig: string, minute: number, serial: string): ReportRow => ({
      rig_id: rig,
      received_at: new Date(Date.UTC(2026, 10, 23, 10, minute)),
      serial,
      lan_ip: '192.168.1.2',
      peer_address: '10.144.50.2',
      version: '2.0',
      branch: 'main',
      latitude: 52.5,
      longitude: 13.4,
    });
    await db.writes.run((tx) => storeRigReports(db, [report('rig1', 1, 'A'), report('rig2', 2, 'B'), report('rig1', 3, 'C')], tx));
    const rigs = await db.reader.all<{ id: string; serial: string }>('SELECT id, serial FROM rigs ORDER BY id');
    t.deepEqual(rigs.map((r) => [r.id, r.serial]), [['rig1', 'C'], ['rig2', 'B']], 'the last report of each rig wins');
    const history = await db.reader.all<{ rig_id: string; serial: string }>('SELECT rig_id, serial FROM rig_reports ORDER BY id');
    t.deepEqual(history.map((r) => `${r.rig_id} ${r.serial}`), ['rig1 A', 'rig2 B', 'rig1 C'], 'three history rows, in order');
  } finally {
    await db.close();
  }
});

test('storeRigReports: a stored last report past the batch by more than the slack is left; within it, kept; one statement text for every batch', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  // Every statement's text as the driver runs it (Sequelize's afterQuery hook).
  const texts = new Set<string>();
  db.sequelize.addHook('afterQuery', (_options, query) => {
    const { sql } = query as unknown as { sql?: string };
    if (sql && /^(WITH \S+ AS \()?INSERT INTO ["`]rigs["`]/.test(sql)) texts.add(sql);
  });
  try {
    const report = (rig: string, at: Date | null, serial: string): ReportRow => ({
      rig_id: rig,
      received_at: at,
      serial,
      lan_ip: null,
      peer_address: '10.144.50.2',
      version: '2.0',
      branch: 'main',
      latitude: null,
      longitude: null,
    });
    const now = Date.now();
    // rig1 last reported a day ahead (a clock that was ahead), rig2 30 s ahead (within FUTURE_SLACK_MS).
    await db.writes.run((tx) => storeRigReports(db, [report('rig1', new Date(now + 86_400_000), 'ahead'), report('rig2', new Date(now + 30_000), 'close')], tx));
    await db.writes.run((tx) => storeRigReports(db, [report('rig1', null, 'now1'), report('rig2', null, 'now2')], tx));
    const rigs = await db.reader.all<{ id: string; serial: string; last_seen_at: string | Date }>('SELECT id, serial, last_seen_at FROM rigs ORDER BY id');
    t.deepEqual(rigs.map((r) => r.serial), ['now1', 'close'], 'rig1 moved to the present; rig2 kept its later report');
    const seen = rigs[0].last_seen_at;
    const seenMs = seen instanceof Date ? seen.getTime() : new Date(seen.replace(' +00:00', 'Z').replace(' ', 'T')).getTime();
    t.ok(Math.abs(seenMs - now) < 60_000, `rig1 is at now (${new Date(seenMs).toISOString()})`);
    // Same number of rows (PostgreSQL's text has one VALUES tuple per row), another time.
    await db.writes.run((tx) => storeRigReports(db, [report('rig3', new Date(now - 3_600_000), 'old'), report('rig4', new Date(now - 7_200_000), 'older')], tx));
    t.equal(texts.size, 1, `the rig upsert's text is the same for batches at different times (${texts.size} texts over 3 batches)`);
    t.equal((await db.reader.all('SELECT id FROM rig_reports')).length, 6, 'every report is history');
  } finally {
    await db.close();
  }
});

test('storeRigReports: a batch of known rigs runs three statements (bindings, upsert, history; PostgreSQL: the last two in one); "now" is the transaction\'s (PostgreSQL: its now(), read with the bindings)', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  const statements: string[] = [];
  db.sequelize.addHook('afterQuery', (_options, query) => {
    const { sql } = query as unknown as { sql?: string };
    if (sql && /^\s*(SELECT|INSERT|UPDATE|WITH)\b/i.test(sql)) statements.push(sql);
  });
  const report = (rig: string, serial: string): ReportRow => ({ rig_id: rig, received_at: null, serial, lan_ip: null, peer_address: '10.144.50.2', version: '2.0', branch: 'main', latitude: 47.376887, longitude: 8.541694 });
  // One batch as the report path runs it: the bindings read in t, then the batch stored in t; and t's now() at the end.
  const batch = (rigs: string[], serial: string) =>
    db.writes.run(async (tx) => {
      await readBindings(db, rigs, tx);
      await storeRigReports(db, rigs.map((r) => report(r, serial)), tx);
      if (!onPostgres) return new Date();
      const [row] = await db.sequelize.query<{ t_now: Date }>('SELECT now() AS t_now', { type: QueryTypes.SELECT, transaction: tx });
      return new Date(row!.t_now);
    });
  try {
    const first = await batch(['rig1', 'rig2'], 'new');
    const isHistory = (s: string) => /^(WITH .*\) )?INSERT INTO ["`]rig_reports["`]/.test(s);
    const firstHistory = statements.filter(isHistory);
    statements.length = 0;
    const second = await batch(['rig1', 'rig2', 'rig1'], 'known');
    const batchStatements = statements.filter((s) => !s.includes('t_now'));
    const ran = batchStatements.map((s) => s.slice(0, 30));
    t.equal(ran.length, onPostgres ? 2 : 3, `${onPostgres ? 'two statements (bindings; rigs and history in one)' : 'three statements'} for a batch of known rigs: ${JSON.stringify(ran)}`);
    t.notOk(batchStatements.some((s) => /^SELECT now\(\)/i.test(s)), 'no statement of its own asks for now()');
    const texts = new Set([...firstHistory, ...batchStatements.filter(isHistory)]);
    t.equal(texts.size, 1, 'one history statement text for 2 rows and for 3 (the rows are one bound value)');
    const history = await db.reader.all<{ serial: string; received_at: string | Date }>('SELECT serial, received_at FROM rig_reports ORDER BY id');
    const at = (v: string | Date) => (v instanceof Date ? v.getTime() : new Date(v.replace(' +00:00', 'Z').replace(' ', 'T')).getTime());
    t.equal(history.length, 5, 'every report is history');
    if (onPostgres) {
      // The transaction's now(), to the microsecond as JavaScript keeps it (ms): both batches, the first without bindings to read it from.
      t.deepEqual(history.map((h) => at(h.received_at)), [first, first, second, second, second].map((d) => d.getTime()), "each report received at its transaction's now()");
    } else {
      t.ok(history.every((h) => Math.abs(at(h.received_at) - Date.now()) < 600_000), "each report received at this host's now");
    }
  } finally {
    await db.close();
  }
});

test('insertRows stores NaN and ±Infinity as binding each alone stores it', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const at = new Date('2026-11-24T10:00:00.123Z');
    const cols = ['id', 'serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'current_project', 'created_at', 'updated_at'];
    const cases: [number, number][] = [
      [Number.NaN, Number.POSITIVE_INFINITY],
      [Number.NEGATIVE_INFINITY, 1.5],
      [Number.POSITIVE_INFINITY, Number.NaN],
    ];
    const row = (id: string, latitude: number, longitude: number) => {
      const r: Record<string, unknown> = { ...rigRow(id, at, 'S'), latitude, longitude };
      return cols.map((c) => r[c] as string | number | null | Date);
    };
    // The rows through insertRows; the same rows, one by one, each value bound alone.
    await db.writes.run((tx) => db.dialect.insertRows(db.models.Rig, cols, cases.map(([a, b], i) => row(`rows${i}`, a, b)), tx));
    for (const [i, [a, b]] of cases.entries()) {
      await db.writes.run((tx) => db.dialect.insertRows(db.models.Rig, cols, [row(`bound${i}`, 0, 0)], tx));
      await db.writes.run((tx) => db.sequelize.query('UPDATE rigs SET latitude = $1, longitude = $2 WHERE id = $3', { bind: [a, b, `bound${i}`], transaction: tx }));
    }
    const stored = await db.reader.all<{ id: string; latitude: number | null; longitude: number | null }>('SELECT id, latitude, longitude FROM rigs');
    const byId = new Map(stored.map((r) => [r.id, r]));
    for (const i of cases.keys()) {
      const a = byId.get(`rows${i}`);
      const b = byId.get(`bound${i}`);
      t.ok(a && b && Object.is(a.latitude, b.latitude) && Object.is(a.longitude, b.longitude), `${cases[i]!.join(', ')}: ${JSON.stringify([a?.latitude, a?.longitude].map(String))} as bound: ${JSON.stringify([b?.latitude, b?.longitude].map(String))}`);
    }
  } finally {
    await db.close();
  }
});
