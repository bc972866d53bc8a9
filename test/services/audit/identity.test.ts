// Rig identity on record: refused reports, takeovers, rebinds, forgets and key refusals each become
// one audit entry with the client address; quota refusals go through the tally (one entry per rig
// and minute); the chain stays valid (real database, both engines).
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { silentLogger } from '../../../src/log.ts';
import { verifyChain } from '../../../src/services/audit/chain.ts';
import { auditIdentityEvents } from '../../../src/services/audit/identity.ts';
import { readAudit } from '../../../src/services/audit/log.ts';
import { AuditTally } from '../../../src/services/audit/tally.ts';
import { identityEvents } from '../../../src/services/rigs/identity-events.ts';
import { withDb } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

test('identity events land in the audit log, quota refusals aggregated', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const tally = new AuditTally(db, silentLogger);
    const events = auditIdentityEvents(identityEvents(silentLogger), db, tally, silentLogger);
    events('rig_report_refused', { rig: 'rig5', bound: '10.144.20.2', address: '10.144.20.9', mode: 'strict' });
    events('rig_takeover', { rig: 'rig6', from: '10.144.20.3', address: '10.144.20.4' });
    events('key_refused', { rig: 'rig3', owner: 'rig2', key: 'rig2/a.sqlite' });
    events('rig_rebind', { rig: 'rig5', from: '10.144.20.2', to: '10.144.20.9' });
    for (let i = 0; i < 50; i++) events('quota_refused', { rig: 'rig7', bound: 'open_per_rig' });
    await events.settled();
    let entries = await readAudit(db.reader, {});
    const seen = entries.map((e) => [e.kind, e.subject, e.client]);
    t.deepEqual(
      seen.sort(),
      [
        ['key.refused', 'rig3', null],
        ['rig.rebind', 'rig5', null],
        ['rig.refused', 'rig5', '10.144.20.9'],
        ['rig.takeover', 'rig6', '10.144.20.4'],
      ],
      'one entry per event, naming the rig and the client address',
    );
    t.ok(entries.find((e) => e.kind === 'rig.rebind')?.actor?.startsWith('cli:'), 'a rebind is the operator command user');
    t.equal(entries.find((e) => e.kind === 'rig.refused')?.details.bound, '10.144.20.2', 'details kept');
    await tally.flush();
    entries = await readAudit(db.reader, {});
    const quota = entries.filter((e) => e.kind === 'quota.refused');
    t.deepEqual(quota.map((e) => [e.subject, e.details.count]), [['rig7', 50]], '50 quota refusals: one entry with the count');
    t.ok((await verifyChain(db.reader)).ok, 'the chain is valid');
  } finally {
    await db.close();
  }
});
