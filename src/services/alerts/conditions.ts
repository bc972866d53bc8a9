/**
 * The conditions behind the incidents that are not about a rig's silence: each check says which
 * (kind, subject) pairs hold now, with their details and text. The sweep opens an incident for a
 * pair that holds and resolves an open one whose pair no longer does.
 */
import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { failedCaptures as failedCaptureRows, queuedCaptures } from '../../db/captures.ts';
import { runningNodes } from '../../db/nodes.ts';
import { LIVE_HEARTBEATS } from '../cluster/live.ts';
import type { CheckContext, Condition } from './condition.ts';
import type { IncidentKind } from './event.ts';
import { identityRefusals } from './refusals.ts';

export type { CheckContext, Condition };

/** Failed captures are looked for among those that failed within this many seconds. */
export const FAILED_LOOKBACK_S = 86_400;

const iso = (v: string | Date) => new Date(v).toISOString();

/** A capture job that failed for good: the capture stays in a failed incident until it is ingested again. */
export async function failedCaptures(ctx: CheckContext): Promise<Condition[]> {
  const since = new Date(ctx.now.getTime() - FAILED_LOOKBACK_S * 1000);
  const openIds = ctx.openFailed.map(Number).filter((n) => Number.isSafeInteger(n));
  const rows = await failedCaptureRows(ctx.reader, since, openIds);
  return rows.map((r) => ({
    kind: 'capture_failed',
    subject: String(r.id),
    rig: r.rig_id ?? undefined,
    details: { capture: Number(r.id), key: r.key, rig: r.rig_id, error_code: r.error_code, error: (r.last_error ?? '').slice(0, 500) },
    text: `capture ${r.id} (${r.key}) from rig ${r.rig_id ?? 'unknown'} failed for good${r.finished_at ? ` at ${iso(r.finished_at)}` : ''}: ${(r.last_error ?? r.error_code ?? 'no reason recorded').slice(0, 200)}`,
  }));
}

/** Free space of data_dir under twice server.min_free_mb. */
export async function diskLow(ctx: CheckContext): Promise<Condition[]> {
  const dir = path.resolve(ctx.config.data_dir);
  const st = await statfs(dir);
  const free = Number(st.bavail) * Number(st.bsize);
  const floor = ctx.config.server.min_free_mb * 2 * 1024 * 1024;
  if (free >= floor) return [];
  const mib = Math.floor(free / 1024 / 1024);
  return [
    {
      kind: 'disk_low',
      subject: ctx.instance,
      details: { data_dir: dir, free_mib: mib, floor_mib: floor / 1024 / 1024 },
      text: `disk low on ${ctx.instance}: ${mib} MiB free in ${dir} (under 2 x server.min_free_mb = ${floor / 1024 / 1024} MiB)`,
    },
  ];
}

/**
 * The oldest queued capture waiting longer than alerts.backlog_s: since it was queued, or since the
 * database took writes again when that is later (during an outage nothing could be ingested; after
 * it the runner drains what waited). An open ingest_backlog stays open while the capture is older
 * than the threshold (the database's return is not the runner's).
 */
export async function ingestBacklog(ctx: CheckContext): Promise<Condition[]> {
  const row = await queuedCaptures(ctx.reader);
  if (!row.oldest) return [];
  const queued = new Date(row.oldest).getTime();
  const since = ctx.backlogOpen === true ? queued : Math.max(queued, ctx.writableSince?.getTime() ?? -Infinity);
  if (ctx.now.getTime() - since <= ctx.config.alerts.backlog_s * 1000) return [];
  return [
    {
      kind: 'ingest_backlog',
      subject: null,
      details: { queued: Number(row.n), oldest_queued_at: iso(row.oldest) },
      text: `ingest backlog: ${Number(row.n)} captures queued, the oldest since ${iso(row.oldest)} (over alerts.backlog_s = ${ctx.config.alerts.backlog_s} s)`,
    },
  ];
}

/**
 * Nodes not stopped silent for more than LIVE_HEARTBEATS periods: since their last heartbeat, or
 * since the database took writes again when that is later (during an outage no node could beat).
 * A node whose node_down is open stays down until its heartbeat is back (the database's return is not the node's).
 */
export async function nodesDown(ctx: CheckContext): Promise<Condition[]> {
  const staleMs = LIVE_HEARTBEATS * ctx.config.cluster.heartbeat_s * 1000;
  const writable = ctx.writableSince?.getTime() ?? -Infinity;
  const now = ctx.now.getTime();
  const rows = await runningNodes(ctx.reader);
  return rows
    .filter((r) => {
      const heard = new Date(r.heartbeat_at).getTime();
      if (now - heard <= staleMs) return false;
      return ctx.openDown?.includes(r.instance_id) === true || now - Math.max(heard, writable) > staleMs;
    })
    .map((r) => ({
      kind: 'node_down',
      subject: r.instance_id,
      details: { node: r.instance_id, hostname: r.hostname, last_heartbeat: iso(r.heartbeat_at) },
      text: `node ${r.instance_id} (${r.hostname}) is down: no heartbeat since ${iso(r.heartbeat_at)}`,
    }));
}

/** Each check and the kinds it owns: an open incident of those kinds whose condition ended resolves (unless the check failed). */
export const CHECKS: { kinds: IncidentKind[]; run: (ctx: CheckContext) => Promise<Condition[]> }[] = [
  { kinds: ['capture_failed'], run: failedCaptures },
  { kinds: ['disk_low'], run: diskLow },
  { kinds: ['ingest_backlog'], run: ingestBacklog },
  { kinds: ['node_down'], run: nodesDown },
  { kinds: ['rig_refused', 'key_refused'], run: identityRefusals },
];
