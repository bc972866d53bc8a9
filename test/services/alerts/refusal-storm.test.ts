// One box refused under many rig ids is one incident, not one per id: a `rigd serve` child with
// alerts checked every second and a webhook receiver; 30 rigs report from their own namespace
// addresses, then a stolen rig at one address reports for all 30 ids and reserves keys of three of
// them, and a clone at another address reports for one id. Each offending address and kind opens
// one incident (one notification) naming the address, the refusals, the rig ids and the audit
// command; an open incident of the earlier per-id shape resolves. SQLite or PostgreSQL.
import { QueryTypes } from 'sequelize';
import test from 'tape';
import { openDatabase, type Database } from '../../../src/db/index.ts';
import { insertIncident } from '../../../src/db/incidents.ts';
import { createHosts, type Hosts } from '../../helpers/netns.ts';
import { rigd } from '../../helpers/cli.ts';
import { testDb } from '../../helpers/dialect.ts';
import { waitFor } from '../../helpers/jobs.ts';
import { serveProcess, type ServeProcess } from '../../helpers/serve-process.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { notifyJobs } from '../notify/events.ts';
import { startHttpSink, type HttpSink } from '../notify/sinks.ts';

const IDS = Array.from({ length: 30 }, (_v, i) => `rig-${String(i + 1).padStart(2, '0')}`);
const FLEET_ADDRS = IDS.map((_id, i) => `10.144.207.${11 + i}`);
const FLEET = { name: 'fleet', addr: FLEET_ADDRS[0]!, gw: '10.144.207.1', extraAddrs: FLEET_ADDRS.slice(1) };
const THIEF = '10.144.208.2';
const CLONE = '10.144.208.3';
const OFFENDERS = { name: 'offenders', addr: THIEF, gw: '10.144.208.1', extraAddrs: [CLONE] };
const BODY = 'rig_serial=SN&gpsd_latitude=47.37&gpsd_longitude=8.54&software_version=3.1.0&git_branch=main';

interface Stored {
  id: number;
  kind: string;
  subject: string | null;
  resolved_at: unknown;
  details: string;
}

const incidentsOf = (db: Database, kinds: string[]) =>
  db.sequelize.query<Stored>(`SELECT id, kind, subject, resolved_at, details FROM incidents WHERE kind IN (${kinds.map(() => '?').join(', ')}) ORDER BY id`, {
    replacements: kinds,
    type: QueryTypes.SELECT,
  });

type Hook = { event: string; incident: { id: number; kind: string }; rig: { id: string } | null; text: string };
const hooks = (sink: HttpSink, kind: string, event?: string): Hook[] =>
  sink.received.map((r) => JSON.parse(r.body.toString()) as Hook).filter((h) => h.incident.kind === kind && (!event || h.event === event));

test('identity refusals: one incident per offending address and kind, naming the address, the refusals and the rig ids', async (t) => {
  const sink = await startHttpSink();
  const dataDir = tmpDir('rigd-refusal-storm-');
  const db = await openDatabase(dataDir, testDb(dataDir));
  let net: Hosts | undefined;
  let serve: ServeProcess | undefined;
  try {
    net = await createHosts([FLEET, OFFENDERS]);
    serve = await serveProcess(
      {
        RIGD_DATA_DIR: dataDir,
        RIGD_RIGS_ADDRESS_BINDING: 'strict',
        RIGD_ALERTS_CHECK_INTERVAL_S: '1',
        RIGD_NOTIFY_WEBHOOKS_0_URL: sink.url('/hook'),
        RIGD_NOTIFY_FIRST_RETRY_S: '0.2',
      },
      ['--port', '0', '--host', '0.0.0.0'],
    );
    const port = new URL(serve.url).port;
    const hosts = { [FLEET.gw]: 'fleet', [OFFENDERS.gw]: 'offenders' } as Record<string, string>;
    const request = (gw: string, from: string, path: string, method = 'GET', body?: string) =>
      net!.request(hosts[gw]!, {
        url: `http://${gw}:${port}${path}`,
        method,
        headers: { host: `${gw}:${port}`, ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body,
        localAddress: from,
      });
    const report = (gw: string, from: string, id: string) => request(gw, from, `/api/v1/rigs/${id}`, 'PUT', BODY);
    const reserve = (gw: string, from: string, key: string) => request(gw, from, `/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=100`);

    for (const [i, id] of IDS.entries()) t.equal((await report(FLEET.gw, FLEET_ADDRS[i]!, id)).status, 200, `${id} reports from ${FLEET_ADDRS[i]}`);
    for (const i of [0, 1, 2]) t.equal((await reserve(FLEET.gw, FLEET_ADDRS[i]!, `${IDS[i]}/a.sqlite`)).status, 200, `${IDS[i]} reserves its key`);

    const refused: number[] = [];
    for (const id of IDS) refused.push((await report(OFFENDERS.gw, THIEF, id)).status);
    t.deepEqual([...new Set(refused)], [409], `the 30 reports from ${THIEF}, each for another rig's id: 409`);
    t.equal((await report(OFFENDERS.gw, CLONE, 'rig-07')).status, 409, `the clone's report for rig-07 from ${CLONE}: 409`);
    const keys: number[] = [];
    for (const i of [0, 1, 2]) keys.push((await reserve(OFFENDERS.gw, THIEF, `${IDS[i]}/a.sqlite`)).status);
    t.deepEqual(keys, [403, 403, 403], `three keys of other rigs reserved from ${THIEF}: 403`);
    // An incident of the shape before (per rig id) open for rig-07, which was just refused (as left open by an upgrade).
    const old = await db.writes.run((tx) =>
      insertIncident(db, { kind: 'rig_refused', subject: 'rig-07', at: new Date(), details: { refusals: 1, text: 'rig rig-07: 1 reports refused: the rig id is bound to another VPN address' } }, tx),
    );
    t.notEqual(old, null, 'an incident of the per-id shape is open for rig-07');

    // Settled: the open incidents account for every refusal (the old shape: 30 incidents, one per id), and every notification is done.
    const settled = await waitFor(
      async () => {
        const open = (await incidentsOf(db, ['rig_refused', 'key_refused'])).filter((i) => i.resolved_at === null && i.id !== old);
        const counted = open.reduce((n, i) => n + Number((JSON.parse(i.details) as { refusals?: number }).refusals ?? 0), 0);
        if (counted < 34 && open.length < 30) return null;
        const jobs = await notifyJobs(db);
        return jobs.every((j) => j.state === 'done') ? open : null;
      },
      90_000,
      'the refusal incidents to count every refusal and their notifications to be sent',
      200,
    );
    const opened = hooks(sink, 'rig_refused', 'opened');
    t.equal(settled.filter((i) => i.kind === 'rig_refused').length, 2, `two rig_refused incidents open: ${settled.map((i) => `${i.kind} ${i.subject}`).join(', ')}`);
    t.equal(opened.length, 2, `two rig_refused notifications sent, not one per rig id (${opened.length})`);

    const bySubject = new Map(settled.map((i) => [`${i.kind} ${i.subject}`, JSON.parse(i.details) as Record<string, unknown>]));
    const thief = bySubject.get(`rig_refused ${THIEF}`);
    t.deepEqual(
      thief && { address: thief.address, refusals: thief.refusals, rig_ids: thief.rig_ids, rigs: thief.rigs, audit: thief.audit },
      { address: THIEF, refusals: 30, rig_ids: 30, rigs: IDS.slice(0, 5), audit: `rigd audit --since 1h --client ${THIEF} --kind rig.refused` },
      'the stolen rig: its address, 30 refusals, 30 rig ids and the first five, the audit command',
    );
    t.match(
      String(thief?.text),
      new RegExp(`^reports from ${THIEF.replace(/\./g, '\\.')} refused: 30 refusals for 30 rig ids bound to other VPN addresses \\(rig-01, rig-02, rig-03, rig-04, rig-05 and 25 more\\), first at \\S+Z, last at \\S+Z; see them: rigd audit --since 1h --client ${THIEF.replace(/\./g, '\\.')} --kind rig\\.refused$`),
      'its text, kept up to date while open',
    );
    const thiefHook = opened.find((h) => h.text.startsWith(`reports from ${THIEF} `));
    t.ok(thiefHook, `its notification names ${THIEF}`);
    // It opened with the refusals of its sweep: one id so far (its rig), or several (no rig: they are the victims, not the box).
    const oneId = / refused: \d+ refusals? for rig id (\S+), /.exec(thiefHook?.text ?? '')?.[1] ?? null;
    t.equal(thiefHook?.rig?.id ?? null, oneId, `its rig: ${oneId ?? 'none'} (${thiefHook?.text})`);

    const clone = bySubject.get(`rig_refused ${CLONE}`);
    t.deepEqual(clone && [clone.refusals, clone.rigs], [1, ['rig-07']], 'the clone: one refusal for rig-07');
    t.match(String(clone?.text), new RegExp(`^reports from ${CLONE.replace(/\./g, '\\.')} refused: 1 refusal for rig id rig-07, which is bound to another VPN address, first at `), 'its text names the address and the id');
    t.equal(opened.find((h) => h.text.startsWith(`reports from ${CLONE} `))?.rig?.id, 'rig-07', 'its notification carries rig-07 (the rig page of the id used)');

    const key = bySubject.get(`key_refused ${THIEF}`);
    t.deepEqual(key && [key.refusals, key.rig_ids, key.rigs], [3, 3, IDS.slice(0, 3)], 'key refusals: one incident for the address, naming the three owners');
    t.match(String(key?.text), new RegExp(`^uploads from ${THIEF.replace(/\./g, '\\.')} refused: 3 refusals of keys that belong to 3 other rigs \\(rig-01, rig-02, rig-03\\)`), 'its text');
    t.equal(hooks(sink, 'key_refused', 'opened').length, 1, 'one key_refused notification');

    const before = await waitFor(async () => (await incidentsOf(db, ['rig_refused'])).find((i) => i.id === old && i.resolved_at !== null), 30_000, 'the per-id incident to resolve', 200).catch(() => null);
    t.ok(before, 'the open incident of the per-id shape resolved, though rig-07 is still being refused');
    await waitFor(async () => (await notifyJobs(db)).every((j) => j.state === 'done'), 30_000, 'the notifications to be sent', 200);
    t.deepEqual(hooks(sink, 'rig_refused', 'resolved').map((h) => h.incident.id), [old], 'with its resolved notification');

    const audit = await rigd(['audit', '--json', '--since', '1h'], { env: { RIGD_DATA_DIR: dataDir } });
    const entries = JSON.parse(audit.stdout) as { kind: string; client: string | null }[];
    t.deepEqual(
      [...new Set(entries.filter((e) => e.kind === 'rig.refused' || e.kind === 'key.refused').map((e) => `${e.kind} ${e.client}`))].sort(),
      [`key.refused ${THIEF}`, `rig.refused ${THIEF}`, `rig.refused ${CLONE}`],
      'the audit log records the source address of each refusal',
    );
    // The command each incident names lists exactly its refusals.
    for (const [incident, kind, n] of [[`rig_refused ${THIEF}`, 'rig.refused', 30], [`key_refused ${THIEF}`, 'key.refused', 3], [`rig_refused ${CLONE}`, 'rig.refused', 1]] as const) {
      const named = String(bySubject.get(incident)?.audit ?? '');
      const args = named.split(' ');
      t.equal(args.slice(0, 2).join(' '), 'rigd audit', `${incident}: names a rigd audit command (${named})`);
      const run = await rigd([...args.slice(1), '--json'], { env: { RIGD_DATA_DIR: dataDir } });
      t.equal(run.code, 0, `${incident}: its command runs (${run.stderr.trim()})`);
      const listed = JSON.parse(run.stdout || '[]') as { kind: string; client: string | null }[];
      t.deepEqual([listed.length, [...new Set(listed.map((e) => `${e.kind} ${e.client}`))]], [n, [`${kind} ${incident.split(' ')[1]}`]], `${incident}: it lists its ${n} refusals and nothing else`);
    }
  } finally {
    if (serve) await serve.stop('SIGTERM');
    await net?.destroy();
    await db.close();
    await sink.close();
  }
});
