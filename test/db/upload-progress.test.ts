// Bytes seen by uploads in flight (services/uploads/progress.ts flushes them once a second), on a real
// database of either engine: every reserved upload's figure stored in one statement however many are in
// flight, so the writer is held for one statement; an upload no longer reserved keeps its own figure.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { insertReservations } from '../../src/db/reservations.ts';
import { saveBytesSeen } from '../../src/db/uploads.ts';
import { withDb } from '../helpers/dialect.ts';
import { recordStatements } from '../helpers/statements.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('bytes seen: 300 uploads in flight stored in one statement; only reserved uploads change', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const expires = new Date(Date.now() + 600_000);
    const rows = Array.from({ length: 300 }, (_, i) => ({ rig_id: null, peer_address: '10.144.112.2', key: `r/${i}`, expected_size: 1_000_000 + i, project: null, url_expires_at: expires, next_check_at: null }));
    const ids = await db.writes.run((tx) => insertReservations(db, rows, tx));
    // One of them is no longer reserved (expired): its figure must stay.
    await db.writes.run((tx) => db.sequelize.query("UPDATE uploads SET state = 'expired', bytes_seen = 7 WHERE id = ?", { replacements: [ids[0]], transaction: tx }));

    const { statements, stop } = recordStatements(db.sequelize);
    // Byte counts past 2^32 stay exact (a capture upload may be large).
    await saveBytesSeen(db, ids.map((id, i) => [id, i === 299 ? 5_000_000_000 : 1000 * i] as const));
    stop();
    const updates = statements.filter((s) => /UPDATE\s+"?uploads"?/i.test(s));
    t.equal(updates.length, 1, `one UPDATE for ${ids.length} uploads (${updates.length})`);

    const stored = await db.reader.all<{ id: number; bytes_seen: number | string; state: string }>('SELECT id, bytes_seen, state FROM uploads ORDER BY id');
    t.equal(stored.length, 300, 'no upload added or removed');
    t.deepEqual([stored[0]!.state, Number(stored[0]!.bytes_seen)], ['expired', 7], 'the expired upload kept its figure');
    t.ok(stored.slice(1, 299).every((r, k) => Number(r.bytes_seen) === 1000 * (k + 1)), 'every reserved upload has its own figure');
    t.equal(Number(stored[299]!.bytes_seen), 5_000_000_000, 'a figure past 2^32 exact');
    const none = recordStatements(db.sequelize);
    await saveBytesSeen(db, []);
    none.stop();
    t.equal(none.statements.length, 0, 'nothing to store: no statement');
  } finally {
    await db.close();
  }
});
