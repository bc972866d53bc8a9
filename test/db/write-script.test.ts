// SQLite's report batches as one script (WritePath.runScript, dialect.insertRowsScript,
// storeRigReportsAsScript), and the write path's WAL checkpoints under steady writes.
import test from 'tape';
import { openSync, readSync, closeSync, statSync } from 'node:fs';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { DB_FILE } from '../../src/db/file.ts';
import { openDatabase } from '../../src/db/index.ts';
import { storeRigReports, storeRigReportsAsScript, type ReportRow } from '../../src/db/rig-reports.ts';
import { rejects } from '../helpers/assert.ts';
import { sqliteOnly, withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const report = (rig: string, ms: number, serial: string, latitude: number | null = 52.5): ReportRow => ({
  rig_id: rig,
  received_at: new Date(Date.UTC(2026, 10, 25, 10, 0, 0, ms)),
  serial,
  lan_ip: '192.168.1.2',
  peer_address: '10.144.50.2',
  version: `v'${serial}`,
  branch: 'main',
  latitude,
  longitude: 13.4,
});

test('a report batch as a script stores what the transaction path stores, odd text and fractions included', async (t) => {
  if (sqliteOnly(t, 'the write path takes SQL scripts on SQLite only')) return;
  const a = await openDatabase(...withDb(tmpDir()));
  const b = await openDatabase(...withDb(tmpDir()));
  try {
    t.ok(a.writes.canRunScript, 'the SQLite write path takes scripts');
    // Quotes, a replacement pattern, SQL and JSON syntax, comments, newlines, non-BMP characters.
    const texts = ["S-'1", "''", "$&$'$`", 'json_each(?1)', "x'); DROP TABLE rigs; --", '/* c */ -- d', 'a\nb\tc', 'é😀"\\', '[1,2]'];
    const fractions = [39.884131, 15.805091, -6.591974, 0.1, -0.5, 166.1094502346035, 8.541694, 47, null];
    const batch = texts.flatMap((s, i) => fractions.map((lat, j) => report(`rig${(i * 7 + j) % 20}`, i * 100 + j, s, lat)));
    let started = false;
    await storeRigReportsAsScript(a, batch, () => (started = true));
    t.ok(started, 'onStart is called when the transaction begins');
    await b.writes.run((tx) => storeRigReports(b, batch, tx));
    const read = async (db: typeof a) => ({
      rigs: await db.reader.all('SELECT id, serial, lan_ip, vpn_address, version, branch, latitude, longitude, last_seen_at, created_at FROM rigs ORDER BY id'),
      history: await db.reader.all('SELECT rig_id, received_at, serial, lan_ip, peer_address, version, branch, latitude, longitude FROM rig_reports ORDER BY id'),
    });
    const [viaScript, viaTransaction] = [await read(a), await read(b)];
    t.equal(viaScript.history.length, batch.length, 'every report is a history row');
    t.deepEqual(viaScript, viaTransaction, 'rigs and history exactly as the transaction path stores them');
    t.equal(await storeRigReportsAsScript(a, [report('rig1', 0, 'x', 0.12345678901234567)]), null, 'a value SQL text cannot carry exactly: null, the caller takes the transaction path');
    t.equal(await storeRigReportsAsScript(a, [report('rig1', 0, 'x', 1e-7)]), null, 'an exponent: null');
    t.equal(await storeRigReportsAsScript(a, [report('rig1', 0, '\ud800x')]), null, 'a lone surrogate: null');
  } finally {
    await a.close();
    await b.close();
  }
});

test('runScript: a failing script leaves nothing and frees the writer; a failing COMMIT too', async (t) => {
  if (sqliteOnly(t, 'the write path takes SQL scripts on SQLite only')) return;
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    await db.sequelize.query('CREATE TABLE t (n INTEGER NOT NULL UNIQUE)');
    await db.sequelize.query('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
    await db.sequelize.query('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
    const count = async (table: string) => ((await db.sequelize.query(`SELECT count(*) AS c FROM ${table}`, { type: QueryTypes.SELECT, plain: true })) as { c: number }).c;
    await rejects(t, db.writes.runScript('INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (1)'), /UNIQUE/, 'a failing statement rejects');
    t.equal(await count('t'), 0, 'the statements before it were rolled back');
    // A deferred foreign key is checked at COMMIT: the COMMIT itself fails, as on a full disk.
    await rejects(t, db.writes.runScript('INSERT INTO child (id, parent_id) VALUES (1, 42)'), /FOREIGN KEY/, 'a failing COMMIT rejects');
    t.equal(await count('child'), 0, 'and leaves nothing');
    await db.writes.runScript('INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)');
    await db.writes.run((tx) => db.sequelize.query('INSERT INTO t VALUES (3)', { transaction: tx }));
    t.equal(await count('t'), 3, 'the writer is free: the next script and the next transaction commit');
    const order: number[] = [];
    await Promise.all([
      db.writes.run(async (tx) => (await db.sequelize.query('INSERT INTO t VALUES (10)', { transaction: tx }), order.push(10))),
      db.writes.runScript('INSERT INTO t VALUES (11)').then(() => order.push(11)),
      db.writes.run(async (tx) => (await db.sequelize.query('INSERT INTO t VALUES (12)', { transaction: tx }), order.push(12))),
    ]);
    t.deepEqual(order, [10, 11, 12], 'scripts take their turn with the other writes');
  } finally {
    await db.close();
  }
});

/** The checkpoint sequence number in the WAL's header: SQLite adds one each time the WAL starts over. */
function walSequence(dataDir: string): number {
  const fd = openSync(path.join(dataDir, `${DB_FILE}-wal`), 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

test('under writes that never pause, the WAL is checkpointed whole and starts over', async (t) => {
  if (sqliteOnly(t, 'the WAL is SQLite\'s')) return;
  const dir = tmpDir();
  const db = await openDatabase(...withDb(dir));
  try {
    await db.sequelize.query('CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    const text = 'x'.repeat(1000);
    await db.writes.runScript(`INSERT INTO filler (text) VALUES ('${text}')`);
    const first = walSequence(dir);
    // Two writes queued at every moment for 3.5 s: the write path is never idle (the checkpoint
    // interval is 1 s), each write adding ~10 KB to the WAL.
    const until = Date.now() + 3500;
    let writes = 0;
    const writer = async () => {
      while (Date.now() < until) {
        await db.writes.runScript(Array.from({ length: 10 }, () => `INSERT INTO filler (text) VALUES ('${text}')`).join(';'));
        writes++;
      }
    };
    await Promise.all([writer(), writer()]);
    const restarts = walSequence(dir) - first;
    const walBytes = statSync(path.join(dir, `${DB_FILE}-wal`)).size;
    t.ok(restarts >= 1, `the WAL started over ${restarts} time(s) during ${writes} writes that never paused`);
    t.ok(walBytes < writes * 10 * 1000, `the WAL (${(walBytes / 1e6).toFixed(1)} MB) holds less than was written (${((writes * 10 * 1000) / 1e6).toFixed(1)} MB)`);
  } finally {
    await db.close();
  }
});
