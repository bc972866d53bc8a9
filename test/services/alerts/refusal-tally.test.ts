// The identity refusal incidents from audit entries as rigd writes them (appendAudit), through the
// real sweep: per kind and source address, key refusals naming the keys' owners, entries written
// before the address was recorded (key.refused without a client) under "unknown address", entries
// older than an hour left out, and the incident's count following new refusals while it stays open.
import test from 'tape';
import { openIncidentViews } from '../../../src/services/alerts/list.ts';
import { appendAudit } from '../../../src/services/audit/log.ts';
import type { IncidentEvent } from '../../../src/services/alerts/event.ts';
import { openApp } from '../../../src/services/app.ts';
import { testConfig } from '../../helpers/server.ts';

const refused = (rig: string, client: string) => ({ kind: 'rig.refused', actor: `address:${client}`, client, subject: rig, details: { rig, bound: '10.144.209.2', address: client, mode: 'strict' } });
const keyRefused = (owner: string, client: string | null) => ({
  kind: 'key.refused',
  actor: client ? `address:${client}` : null,
  client,
  subject: client ? `@${client}` : 'rig-x',
  details: { rig: client ? `@${client}` : 'rig-x', owner, key: `${owner}/a.sqlite`, ...(client ? { address: client } : {}) },
});

test('identity refusal incidents: per kind and source address, old entries without an address, an hour back', async (t) => {
  const events: IncidentEvent[] = [];
  const app = await openApp(testConfig({}), { onIncident: async (e) => void events.push(structuredClone(e)) });
  try {
    for (const rig of ['r3', 'r1', 'r2']) await appendAudit(app.db, refused(rig, '10.144.209.7'));
    await appendAudit(app.db, refused('r1', '10.144.209.70'));
    await appendAudit(app.db, { ...refused('r9', '10.144.209.8'), atMs: Date.now() - 2 * 3600_000 });
    for (const owner of ['r4', 'r4', 'r5']) await appendAudit(app.db, keyRefused(owner, '10.144.209.7'));
    await appendAudit(app.db, keyRefused('r6', null));
    await app.alerts.sweep();
    const opened = new Map(events.filter((e) => e.event === 'opened').map((e) => [`${e.incident.kind} ${e.incident.subject}`, e]));
    t.deepEqual([...opened.keys()].sort(), ['key_refused 10.144.209.7', 'key_refused unknown address', 'rig_refused 10.144.209.7', 'rig_refused 10.144.209.70'], 'one per kind and address; none for a refusal over an hour old');
    t.match(opened.get('rig_refused 10.144.209.7')?.text ?? '', /^reports from 10\.144\.209\.7 refused: 3 refusals for 3 rig ids bound to other VPN addresses \(r3, r1, r2\), first at /, 'ids in the order first refused');
    t.match(opened.get('rig_refused 10.144.209.70')?.text ?? '', /^reports from 10\.144\.209\.70 refused: 1 refusal for rig id r1, which is bound to another VPN address, .*see them: rigd audit --since 1h --client 10\.144\.209\.70 --kind rig\.refused$/, '10.144.209.70 apart from 10.144.209.7');
    t.match(opened.get('key_refused 10.144.209.7')?.text ?? '', /^uploads from 10\.144\.209\.7 refused: 3 refusals of keys that belong to 2 other rigs \(r4, r5\), /, 'key refusals name the owners');
    t.match(opened.get('key_refused unknown address')?.text ?? '', /^uploads from unknown address refused: 1 refusal of keys that belong to rig r6, .*see them: rigd audit --since 1h --kind key\.refused$/, 'an entry without an address');

    for (const rig of ['r7', 'r8']) await appendAudit(app.db, refused(rig, '10.144.209.70'));
    await app.alerts.sweep();
    const listed = (await openIncidentViews(app.db.reader)).find((i) => i.kind === 'rig_refused' && i.subject === '10.144.209.70');
    t.match(listed?.text ?? '', /^reports from 10\.144\.209\.70 refused: 3 refusals for 3 rig ids bound to other VPN addresses \(r1, r7, r8\)/, `the open incident follows (${listed?.text})`);
    t.equal(events.filter((e) => e.event === 'opened').length, 4, 'without another notification');
  } finally {
    await app.close();
  }
});
