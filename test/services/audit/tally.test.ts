// Aggregated refusals: a rig looping on a refused request becomes one audit entry per rig and
// minute with its count, not one per request; the chain stays valid (real database, both engines).
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { silentLogger } from '../../../src/log.ts';
import { verifyChain } from '../../../src/services/audit/chain.ts';
import { readAudit } from '../../../src/services/audit/log.ts';
import { AuditTally } from '../../../src/services/audit/tally.ts';
import { withDb } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

test('1000 quota refusals of one rig and 3 of another: two entries with their counts', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const clock = { now: Date.parse('2026-11-26T09:00:00Z') };
    const tally = new AuditTally(db, silentLogger, () => clock.now);
    for (let i = 0; i < 1000; i++) {
      tally.note({ kind: 'quota.refused', subject: 'rig5', actor: 'rig:rig5', client: i % 2 ? '10.144.30.5' : '10.144.30.6' });
      clock.now += 10;
    }
    for (let i = 0; i < 3; i++) tally.note({ kind: 'quota.refused', subject: 'rig6', actor: 'rig:rig6', client: '10.144.30.7' });
    t.equal((await readAudit(db.reader, {})).length, 0, 'nothing written before the minute ends');
    await tally.flush();
    const entries = await readAudit(db.reader, {});
    t.deepEqual(entries.map((e) => [e.kind, e.subject, e.details.count]), [['quota.refused', 'rig5', 1000], ['quota.refused', 'rig6', 3]], 'one entry per rig, with the count');
    t.deepEqual((entries[0]!.details.clients as string[]).sort(), ['10.144.30.5', '10.144.30.6'], 'the clients it came from');
    t.equal(entries[0]!.details.first_at, '2026-11-26T09:00:00.000Z', 'the first refusal');
    t.equal(entries[0]!.details.last_at, '2026-11-26T09:00:09.990Z', 'the last refusal');
    await tally.flush();
    t.equal((await readAudit(db.reader, {})).length, 2, 'an empty minute writes nothing');
    tally.note({ kind: 'quota.refused', subject: 'rig5', client: '10.144.30.5' });
    await tally.stop();
    t.equal((await readAudit(db.reader, {})).length, 3, 'stop writes what is left');
    t.ok((await verifyChain(db.reader)).ok, 'the chain is valid');
  } finally {
    await db.close();
  }
});
