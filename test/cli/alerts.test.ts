// `rigd alerts` as operators run it (the real CLI in a child process, same data_dir as the
// service): --json lists open and recent incidents in rigd's JSON shape, the table names them,
// `rigd alerts ack ID` acknowledges one (a second ack, an unknown id and a bad id are clear errors).
import test from 'tape';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

const config = testConfig({ alerts: { min_silence_s: 1, outage_share: 1 } });
const env = { RIGD_DATA_DIR: config.data_dir, RIGD_ALERTS_MIN_SILENCE_S: '1' };

test('setup: a rig silent past its rhythm and one with a hostile branch, swept into incidents', async (t) => {
  const app = await openApp(config);
  const { Rig, RigReport } = app.db.models;
  const ago = (ms: number) => new Date(Date.now() - ms);
  await app.db.writes.run(async (transaction) => {
    for (const [id, branch] of [['rig-a', 'main'], ['rig-evil', '\u001b[31mred\u001b[0m<b>']] as const) {
      await Rig.create({ id, serial: 'S', lan_ip: null, vpn_address: '10.144.38.2', version: '1.0', branch, latitude: 52.5, longitude: 13.4, last_seen_at: ago(60_000), current_project: null }, { transaction });
      for (let i = 0; i < 6; i++) await RigReport.create({ rig_id: id, received_at: ago(60_000 + i * 1000), serial: 'S', lan_ip: null, peer_address: '10.144.38.2', version: '1.0', branch, latitude: 52.5, longitude: 13.4 }, { transaction });
    }
  });
  await app.alerts.sweep();
  const rows = await app.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM incidents WHERE resolved_at IS NULL');
  t.equal(Number(rows[0]!.n), 2, 'two open incidents');
  await app.close();
});

test('rigd alerts --json: the open incidents, JSON only', async (t) => {
  const r = await rigd(['alerts', '--json'], { env });
  t.equal(r.code, 0, 'exit 0');
  t.equal(r.stderr, '', 'nothing on stderr');
  const doc = JSON.parse(r.stdout) as { open: number; incidents: { id: number; kind: string; subject: string; state: string; opened_at: string; text: string }[]; generated_at: string };
  t.equal(doc.open, 2, 'two open');
  t.deepEqual(doc.incidents.map((i) => [i.kind, i.subject, i.state]).sort(), [['rig_offline', 'rig-a', 'open'], ['rig_offline', 'rig-evil', 'open']], 'kind, subject, state');
  t.ok(doc.incidents.every((i) => /Z$/.test(i.opened_at)), 'times in UTC ending in Z');
  t.match(doc.incidents.find((i) => i.subject === 'rig-a')!.text, /^rig rig-a offline: no report since .*Z \(it reports every [\d.]+ s\); last at 52\.50000, 13\.40000; version 1\.0 on main$/, 'one line a person reads');
});

test('rigd alerts: a table; rig-reported text cannot drive the terminal', async (t) => {
  const r = await rigd(['alerts'], { env });
  t.equal(r.code, 0, 'exit 0');
  t.match(r.stdout, /^2 open, 0 resolved in the last 24 h\n/, 'a summary line');
  t.match(r.stdout, /ID +STATE +KIND +SUBJECT/, 'a header');
  t.match(r.stdout, /rig-a/, 'rig-a listed');
  t.notOk(r.stdout.includes('\u001b[31m'), 'no escape sequence from a rig reaches the terminal');
});

test('rigd alerts ack ID: acknowledged once; clear errors otherwise', async (t) => {
  const list = JSON.parse((await rigd(['alerts', '--json'], { env })).stdout) as { incidents: { id: number; subject: string }[] };
  const id = list.incidents.find((i) => i.subject === 'rig-a')!.id;
  const ok = await rigd(['alerts', 'ack', String(id), '--json'], { env });
  t.equal(ok.code, 0, 'exit 0');
  const acked = JSON.parse(ok.stdout) as { state: string; acked_by: string; acked_at: string };
  t.equal(acked.state, 'acked', 'state acked');
  t.match(acked.acked_by, /^cli:/, 'acknowledged by the operator');
  const again = await rigd(['alerts', 'ack', String(id)], { env });
  t.equal(again.code, 1, 'a second ack: exit 1');
  t.match(again.stderr, new RegExp(`incident ${id} was acknowledged at .*Z by cli:`), `says so: ${again.stderr.trim()}`);
  const unknown = await rigd(['alerts', 'ack', '9999'], { env });
  t.equal(unknown.code, 1, 'unknown id: exit 1');
  t.match(unknown.stderr, /incident 9999 not found/, unknown.stderr.trim());
  const bad = await rigd(['alerts', 'ack', 'abc'], { env });
  t.equal(bad.code, 2, 'not an id: usage, exit 2');
  t.match(bad.stderr, /incident id must be a positive whole number/, bad.stderr.trim());
  t.notOk(/at .*\.(js|ts):\d+/.test(unknown.stderr + bad.stderr + again.stderr), 'no stack trace');
  const after = JSON.parse((await rigd(['alerts', '--json'], { env })).stdout) as { incidents: { id: number; state: string }[] };
  t.equal(after.incidents.find((i) => i.id === id)!.state, 'acked', 'listed as acked');
});
