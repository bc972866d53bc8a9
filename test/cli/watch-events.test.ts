// The diff behind --watch --json: two snapshots in, change events out (pure, no I/O).
import test from 'tape';
import type { CaptureView } from '../../src/services/captures/service.ts';
import type { RigView } from '../../src/services/rigs/view.ts';
import type { UploadView } from '../../src/services/uploads/service.ts';
import { diffCaptures, diffRigs, diffUploads } from '../../src/cli/watch-events.ts';

const AT = new Date('2026-11-23T08:00:00Z');

function rig(id: string, status: RigView['status'], seen: string): RigView {
  return {
    id, status, last_seen_at: new Date(seen), serial: `S-${id}`, lan_ip: null, vpn_address: '10.144.180.2', vpn_name: `${id}.rigs.internal`,
    version: '2.0', branch: 'main', latitude: null, longitude: null, current_project: null, created_at: new Date('2026-11-01T00:00:00Z'),
  };
}

test('diffRigs: first snapshot, reports, status changes, nothing when nothing changed', (t) => {
  const a = rig('rig1', 'online', '2026-11-23T07:59:00Z');
  const b = rig('rig2', 'stale', '2026-11-23T07:40:00Z');
  const first = diffRigs(undefined, [a, b], AT);
  t.deepEqual(first.map((e) => [e.event, e.rig.id]), [['rig_appeared', 'rig1'], ['rig_appeared', 'rig2']], 'the first snapshot: one rig_appeared per rig, in list order');
  t.equal(first[0].at, '2026-11-23T08:00:00.000Z', 'at: ISO 8601 in UTC');
  t.deepEqual(diffRigs([a, b], [a, b], AT), [], 'unchanged: no event');
  t.deepEqual(diffRigs([a, b], [a], AT), [], 'a rig leaving the list: no event');

  const b2 = rig('rig2', 'online', '2026-11-23T08:00:00Z');
  const a2 = rig('rig1', 'stale', '2026-11-23T07:59:00Z');
  const c = rig('rig3', 'online', '2026-11-23T08:00:00Z');
  const events = diffRigs([a, b], [a2, b2, c], AT);
  t.deepEqual(
    events.map((e) => [e.event, e.rig.id, 'previous_status' in e ? e.previous_status : null]),
    [['status_changed', 'rig1', 'online'], ['reported', 'rig2', null], ['status_changed', 'rig2', 'stale'], ['rig_appeared', 'rig3', null]],
    'time alone: status_changed; a report: reported then status_changed; a new rig: rig_appeared',
  );
  const line = JSON.parse(JSON.stringify(events[1]));
  t.deepEqual(Object.keys(line), ['event', 'at', 'rig'], 'reported: event, at, rig');
  t.equal(line.rig.last_seen_at, '2026-11-23T08:00:00.000Z', 'the rig as in rigd rigs --json');
  t.deepEqual(Object.keys(JSON.parse(JSON.stringify(events[2]))), ['event', 'at', 'rig', 'previous_status'], 'status_changed carries previous_status');
  t.end();
});

test('diffRigs: went_offline / came_online after status_changed when the status crosses to or from offline', (t) => {
  const on = rig('rig1', 'online', '2026-11-23T07:59:00Z');
  const stale = rig('rig1', 'stale', '2026-11-23T07:30:00Z');
  const off = rig('rig1', 'offline', '2026-11-23T06:00:00Z');
  const kinds = (prev: RigView, cur: RigView) => diffRigs([prev], [cur], AT).map((e) => [e.event, 'previous_status' in e ? e.previous_status : null]);
  t.deepEqual(kinds(stale, { ...stale, status: 'offline' }), [['status_changed', 'stale'], ['went_offline', 'stale']], 'stale to offline (time alone): status_changed, went_offline');
  t.deepEqual(kinds(on, { ...on, status: 'offline' }), [['status_changed', 'online'], ['went_offline', 'online']], 'online to offline in one step: went_offline too');
  t.deepEqual(kinds(off, on), [['reported', null], ['status_changed', 'offline'], ['came_online', 'offline']], 'offline to online (a report): reported, status_changed, came_online');
  t.deepEqual(kinds(off, { ...stale, last_seen_at: new Date('2026-11-23T07:31:00Z') }), [['reported', null], ['status_changed', 'offline'], ['came_online', 'offline']], 'offline to stale is coming online as well');
  t.deepEqual(kinds(on, { ...on, status: 'stale' }).map(([e]) => e), ['status_changed'], 'online to stale: status_changed only');
  t.deepEqual(kinds(off, off), [], 'still offline: nothing');
  t.end();
});

function upload(id: number, state: UploadView['state'], seen: number): UploadView {
  const at = '2026-11-23T07:00:00.000Z';
  return { id, rig_id: 'rig1', key: `rig1/${id}.sqlite`, project: null, state, size: 100, bytes_seen: seen, etag: null, created_at: at, url_expires_at: at, completed_at: null };
}

test('diffUploads: appeared (oldest first), progressed, state changed', (t) => {
  t.deepEqual(diffUploads(undefined, [upload(2, 'reserved', 0), upload(1, 'uploaded', 100)], AT).map((e) => [e.event, e.upload.id]), [['upload_appeared', 1], ['upload_appeared', 2]], 'snapshot, oldest first');
  const events = diffUploads([upload(2, 'reserved', 0), upload(1, 'reserved', 10)], [upload(3, 'reserved', 0), upload(2, 'reserved', 40), upload(1, 'uploaded', 100)], AT);
  t.deepEqual(
    events.map((e) => [e.event, e.upload.id, 'previous_bytes_seen' in e ? e.previous_bytes_seen : 'previous_state' in e ? e.previous_state : null]),
    [['upload_progressed', 1, 10], ['upload_state_changed', 1, 'reserved'], ['upload_progressed', 2, 0], ['upload_appeared', 3, null]],
    'bytes then state, per upload',
  );
  t.deepEqual(diffUploads([upload(1, 'reserved', 10)], [upload(1, 'reserved', 10)], AT), [], 'unchanged: no event');
  t.end();
});

function capture(id: number, state: CaptureView['state'], bytes = 0): CaptureView {
  const at = '2026-11-23T07:00:00.000Z';
  return {
    id, bucket: 'captures', key: `rig1/${id}.sqlite`, url: '', etag: 'e', size: 10, rig_id: 'rig1', project: null, upload_id: null, job_id: 1,
    state, attempts: 0, error_code: null, last_error: null, progress: bytes ? { step: 'download', bytes, total: 10 } : null, sha256: null, tables: null,
    page_size: null, page_count: null, created_at: at, updated_at: at, started_at: null, finished_at: null,
  };
}

test('diffCaptures: appeared, state changed; progress alone is no event', (t) => {
  t.deepEqual(diffCaptures(undefined, [capture(1, 'queued')], AT).map((e) => e.event), ['capture_appeared']);
  const events = diffCaptures([capture(1, 'queued'), capture(2, 'ingesting', 1)], [capture(2, 'ingesting', 5), capture(1, 'ingesting')], AT);
  t.deepEqual(events.map((e) => [e.event, e.capture.id, 'previous_state' in e ? e.previous_state : null]), [['capture_state_changed', 1, 'queued']]);
  t.end();
});

test('followJson: whole lines, a failed poll keeps the last good snapshot, abort ends it', async (t) => {
  const { followJson } = await import('../../src/cli/follow-json.ts');
  const a = rig('rig1', 'online', '2026-11-23T07:59:00Z');
  const b = rig('rig2', 'online', '2026-11-23T07:59:30Z');
  const polls: (() => RigView[])[] = [() => [a], () => { throw new Error('database is locked'); }, () => [a, b]];
  const lines: string[] = [];
  const controller = new AbortController();
  let n = 0;
  const load = async () => {
    const poll = polls[Math.min(n++, polls.length - 1)];
    if (n > polls.length) controller.abort();
    return poll();
  };
  await followJson({ load, diff: diffRigs, intervalMs: 5, write: (l) => lines.push(l), signal: controller.signal });
  t.ok(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n')), 'one event per line');
  t.deepEqual(lines.map((l) => [JSON.parse(l).event, JSON.parse(l).rig.id]), [['rig_appeared', 'rig1'], ['rig_appeared', 'rig2']], 'after the failed poll, only the new rig: no second snapshot');
});
