/**
 * The change events of `--watch --json` (NDJSON): a pure diff of two snapshots of a list. The first
 * snapshot is diffed against nothing, so it yields one `*_appeared` event per item that exists.
 * Items that leave the list (retention, --limit) yield nothing.
 */
import type { CaptureView } from '../services/captures/service.ts';
import type { RigView } from '../services/rigs/view.ts';
import type { UploadView } from '../services/uploads/service.ts';

export type RigEvent =
  | { event: 'rig_appeared' | 'reported'; at: string; rig: RigView }
  | { event: 'status_changed' | 'went_offline' | 'came_online'; at: string; rig: RigView; previous_status: RigView['status'] };

export type UploadEvent =
  | { event: 'upload_appeared'; at: string; upload: UploadView }
  | { event: 'upload_progressed'; at: string; upload: UploadView; previous_bytes_seen: number }
  | { event: 'upload_state_changed'; at: string; upload: UploadView; previous_state: UploadView['state'] };

export type CaptureEvent =
  | { event: 'capture_appeared'; at: string; capture: CaptureView }
  | { event: 'capture_state_changed'; at: string; capture: CaptureView; previous_state: CaptureView['state'] };

/** A pure function from the previous snapshot (undefined: none yet) and the current one to events. */
export type Differ<T, E> = (previous: readonly T[] | undefined, current: readonly T[], at: Date) => E[];

function byKey<T, K>(items: readonly T[] | undefined, key: (item: T) => K): Map<K, T> {
  return new Map((items ?? []).map((item) => [key(item), item]));
}

/**
 * Per rig, in the current list's order: `rig_appeared` (new id), else `reported` (last_seen_at
 * moved) then `status_changed` (with previous_status; a report can cause it, or time alone), followed
 * by `went_offline` when the new status is offline, or `came_online` when the old one was.
 */
export const diffRigs: Differ<RigView, RigEvent> = (previous, current, at) => {
  const when = at.toISOString();
  const before = byKey(previous, (r) => r.id);
  const events: RigEvent[] = [];
  for (const rig of current) {
    const old = before.get(rig.id);
    if (!old) {
      events.push({ event: 'rig_appeared', at: when, rig });
      continue;
    }
    if (new Date(old.last_seen_at).getTime() !== new Date(rig.last_seen_at).getTime()) events.push({ event: 'reported', at: when, rig });
    if (old.status !== rig.status) {
      events.push({ event: 'status_changed', at: when, rig, previous_status: old.status });
      if (rig.status === 'offline') events.push({ event: 'went_offline', at: when, rig, previous_status: old.status });
      else if (old.status === 'offline') events.push({ event: 'came_online', at: when, rig, previous_status: old.status });
    }
  }
  return events;
};

/** Per upload, oldest first: `upload_appeared`, else `upload_progressed` (bytes_seen moved) then `upload_state_changed`. */
export const diffUploads: Differ<UploadView, UploadEvent> = (previous, current, at) => {
  const when = at.toISOString();
  const before = byKey(previous, (u) => u.id);
  const events: UploadEvent[] = [];
  for (const upload of [...current].sort((a, b) => a.id - b.id)) {
    const old = before.get(upload.id);
    if (!old) {
      events.push({ event: 'upload_appeared', at: when, upload });
      continue;
    }
    if (old.bytes_seen !== upload.bytes_seen) events.push({ event: 'upload_progressed', at: when, upload, previous_bytes_seen: old.bytes_seen });
    if (old.state !== upload.state) events.push({ event: 'upload_state_changed', at: when, upload, previous_state: old.state });
  }
  return events;
};

/** Per capture, oldest first: `capture_appeared`, else `capture_state_changed` (with previous_state). */
export const diffCaptures: Differ<CaptureView, CaptureEvent> = (previous, current, at) => {
  const when = at.toISOString();
  const before = byKey(previous, (c) => c.id);
  const events: CaptureEvent[] = [];
  for (const capture of [...current].sort((a, b) => a.id - b.id)) {
    const old = before.get(capture.id);
    if (!old) events.push({ event: 'capture_appeared', at: when, capture });
    else if (old.state !== capture.state) events.push({ event: 'capture_state_changed', at: when, capture, previous_state: old.state });
  }
  return events;
};
