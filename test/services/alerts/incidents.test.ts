// test: alone (a tmpfs filled; sweep timing)
// The incidents besides rigs going silent, each from its real cause, through the real sweep: an
// ingest backlog (a capture queued longer than alerts.backlog_s, resolved once ingested), a capture
// that failed for good (opened once, repeated every alerts.repeat_s until acknowledged, resolved
// when ingested again), a rig id refused from another address (from the audit log, one incident per address), and free space
// under 2 x server.min_free_mb on a small tmpfs this test mounts (resolved once space is back).
import test from 'tape';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CaptureWorker } from '../../../src/ingest/capture-worker.ts';
import { silentLogger } from '../../../src/log.ts';
import { acknowledge } from '../../../src/services/alerts/list.ts';
import type { IncidentEvent } from '../../../src/services/alerts/event.ts';
import { openApp, type App } from '../../../src/services/app.ts';
import { makeCapture } from '../../helpers/capture-files.ts';
import { putFile, settled } from '../../helpers/captures.ts';
import { testConfig } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { sleep } from './fleet.ts';

const files = tmpDir();
const mounted: string[] = [];
process.on('exit', () => {
  for (const dir of mounted) {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      // already gone
    }
  }
});

async function recordingApp(overrides: Parameters<typeof testConfig>[0]): Promise<{ app: App; events: IncidentEvent[] }> {
  const events: IncidentEvent[] = [];
  const app = await openApp(testConfig(overrides), { onIncident: async (e) => void events.push(structuredClone(e)) });
  return { app, events };
}

const kindOf = (events: IncidentEvent[], kind: string, event?: string) => events.filter((e) => e.incident.kind === kind && (!event || e.event === event));

test('ingest_backlog: the oldest queued capture older than alerts.backlog_s; resolved once ingested', async (t) => {
  const { app, events } = await recordingApp({ alerts: { backlog_s: 1 } });
  const worker = new CaptureWorker(app.db, app.storage, app.config, silentLogger, { pollMs: 50 });
  try {
    const file = path.join(files, 'ok.sqlite');
    await makeCapture(file, { tables: [{ name: 'fixes', columns: [{ name: 'at', type: 'TEXT' }], rows: 20 }] });
    await putFile(app, 'rig1/ok.sqlite', file);
    const q = await app.captures.queueTarget('rig1/ok.sqlite');
    await sleep(1500);
    await app.alerts.sweep();
    await app.alerts.sweep();
    const opened = kindOf(events, 'ingest_backlog', 'opened');
    t.equal(opened.length, 1, 'opened once over two sweeps');
    t.match(opened[0]?.text ?? '', /^ingest backlog: 1 captures queued, the oldest since .*Z \(over alerts\.backlog_s = 1 s\)$/, opened[0]?.text);
    await worker.start();
    t.equal((await settled(app, q.capture.id)).state, 'ingested', 'the worker ingests it');
    await app.alerts.sweep();
    t.equal(kindOf(events, 'ingest_backlog', 'resolved').length, 1, 'resolved');
  } finally {
    await worker.stop();
    await app.close();
  }
});

test('capture_failed: opened once, repeated every alerts.repeat_s, not after an ack; still resolves', async (t) => {
  // repeat_s 3: two sweeps in a row stay well inside it however busy the machine (with 1 s, two
  // slow sweeps could already make the repeat that "no repeat before repeat_s" says is not due).
  const { app, events } = await recordingApp({ alerts: { repeat_s: 3 }, ingest: { max_attempts: 1 } });
  const worker = new CaptureWorker(app.db, app.storage, app.config, silentLogger, { pollMs: 50 });
  try {
    const bad = path.join(files, 'bad.sqlite');
    writeFileSync(bad, 'this is not an SQLite database, whatever its name says\n'.repeat(100));
    await putFile(app, 'rig2/bad.sqlite', bad);
    const q = await app.captures.queueTarget('rig2/bad.sqlite');
    await worker.start();
    t.equal((await settled(app, q.capture.id)).state, 'failed', 'the capture fails for good');
    await worker.stop();
    await app.alerts.sweep();
    await app.alerts.sweep();
    const opened = kindOf(events, 'capture_failed', 'opened');
    t.equal(opened.length, 1, 'opened once');
    t.equal(opened[0]?.incident.subject, String(q.capture.id), 'the capture is its subject');
    t.match(opened[0]?.text ?? '', new RegExp(`^capture ${q.capture.id} \\(rig2/bad\\.sqlite\\) from rig unknown failed for good at .*Z: `), opened[0]?.text);
    t.equal(kindOf(events, 'capture_failed', 'repeated').length, 0, 'no repeat before repeat_s');
    await sleep(3100);
    await app.alerts.sweep();
    await app.alerts.sweep();
    const repeated = kindOf(events, 'capture_failed', 'repeated');
    t.equal(repeated.length, 1, 'repeated once after repeat_s (two sweeps)');
    t.match(repeated[0]?.text ?? '', /^still open since .*Z: capture /, repeated[0]?.text);
    const acked = await acknowledge(app.db, opened[0]!.incident.id, 'cli:operator');
    t.equal(acked.state, 'acked', 'acknowledged');
    await sleep(3100);
    await app.alerts.sweep();
    t.equal(kindOf(events, 'capture_failed', 'repeated').length, 1, 'no repeat after the ack');
    // Ingested again (a good file under the same capture's job): the condition ends.
    await app.db.sequelize.query("UPDATE jobs SET state = 'done' WHERE id = (SELECT job_id FROM captures WHERE id = ?)", { replacements: [q.capture.id] });
    await app.alerts.sweep();
    t.equal(kindOf(events, 'capture_failed', 'resolved').length, 1, 'an acknowledged incident still resolves');
  } finally {
    await worker.stop();
    await app.close();
  }
});

test('rig_refused: a rig id reported from another address than its own (the audit log)', async (t) => {
  const { app, events } = await recordingApp({ rigs: { address_binding: 'strict' } });
  try {
    await app.rigs.report('rig-id', { rig_serial: 'S1' }, '10.144.39.2');
    await app.rigs.report('rig-id', { rig_serial: 'S2' }, '10.144.39.3').then(
      () => t.fail('accepted'),
      (err: Error) => t.match(err.message, /bound/, `refused: ${err.message}`),
    );
    // Up to 60 s for the refusal to reach the audit log and a sweep to see it.
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && kindOf(events, 'rig_refused').length === 0; ) {
      await app.alerts.sweep();
      await sleep(100);
    }
    const opened = kindOf(events, 'rig_refused', 'opened');
    t.equal(opened.length, 1, 'one incident');
    t.equal(opened[0]?.incident.subject, '10.144.39.3', 'about the address the report came from');
    t.equal(opened[0]?.rig?.id, 'rig-id', 'the event carries the one rig id it used (where that rig was last)');
    t.match(opened[0]?.text ?? '', /^reports from 10\.144\.39\.3 refused: 1 refusal for rig id rig-id, which is bound to another VPN address, first at \S+Z, last at \S+Z; see them: rigd audit --since 1h --client 10\.144\.39\.3 --kind rig\.refused$/, opened[0]?.text);
    await app.alerts.sweep();
    t.equal(kindOf(events, 'rig_refused', 'opened').length, 1, 'not twice');
  } finally {
    await app.close();
  }
});

test('disk_low: data_dir on a 64 MiB tmpfs, free space under 2 x server.min_free_mb; resolved once space is back', async (t) => {
  const dir = tmpDir('rigd-alerts-disk-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0755', 'tmpfs', dir]);
  mounted.push(dir);
  const { app, events } = await recordingApp({ data_dir: dir, server: { min_free_mb: 16 } });
  try {
    await app.alerts.sweep();
    t.equal(kindOf(events, 'disk_low').length, 0, 'plenty of space: nothing');
    const ballast = path.join(dir, 'ballast');
    writeFileSync(ballast, Buffer.alloc(40 * 1024 * 1024));
    await app.alerts.sweep();
    const opened = kindOf(events, 'disk_low', 'opened');
    t.equal(opened.length, 1, 'disk_low opened');
    t.match(opened[0]?.text ?? '', /^disk low on .*: \d+ MiB free in .* \(under 2 x server\.min_free_mb = 32 MiB\)$/, opened[0]?.text);
    const rows = await app.db.reader.all<{ n: number }>("SELECT COUNT(*) AS n FROM incidents WHERE kind = 'disk_low'");
    t.equal(Number(rows[0]!.n), 1, 'stored (the database lives on that disk)');
    rmSync(ballast);
    await app.alerts.sweep();
    t.equal(kindOf(events, 'disk_low', 'resolved').length, 1, 'resolved once space is back');
  } finally {
    await app.close();
    execFileSync('umount', ['-l', dir]);
    mounted.splice(mounted.indexOf(dir), 1);
  }
});
