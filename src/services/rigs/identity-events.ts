/**
 * What rig identity refuses or changes, as one structured log line per event (field `event`):
 * report refusals, takeovers, rebinds and forgets, key refusals, quota refusals. Quota refusals are
 * counted per (rig, bound, minute) and logged once per minute with their count, not once per request.
 */
import type { Logger } from '../../log.ts';

export type IdentityEventKind =
  | 'rig_report_refused' // a report for an id bound to another address
  | 'rig_takeover' // an id moved to another address (while_online, after its address went silent)
  | 'rig_rebind' // an operator moved an id (rigd rigs rebind)
  | 'rig_forget' // an operator unbound an id (rigd rigs forget)
  | 'key_refused' // a reservation of a key another rig owns
  | 'quota_refused'; // a bound (new ids, open reservations, bytes per day, free space) refused a request

export type IdentityEventDetails = Record<string, string | number | null>;

/** Records one identity event; `requestId`: the request it happened in, when its caller knows it (the line's request_id). */
export type RecordIdentityEvent = (kind: IdentityEventKind, details: IdentityEventDetails, requestId?: string) => void;

const MINUTE_MS = 60_000;

/**
 * The one function every identity event goes through: logs at info with a stable `event` field.
 * Quota refusals (`details.rig` and `details.bound` name them) are aggregated per rig, bound and
 * minute: one line with `count` when the minute ends (flush() writes the pending ones at once).
 */
export function identityEvents(log: Logger, now: () => number = Date.now): RecordIdentityEvent & { flush(): void } {
  const pending = new Map<string, { details: IdentityEventDetails; count: number; minute: number }>();
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    for (const { details, count, minute } of pending.values()) {
      log.info('rig identity event', { event: 'quota_refused', ...details, count, minute: new Date(minute).toISOString() });
    }
    pending.clear();
  };
  const record = (kind: IdentityEventKind, details: IdentityEventDetails, requestId?: string) => {
    if (kind !== 'quota_refused') {
      log.info('rig identity event', requestId === undefined ? { event: kind, ...details } : { event: kind, ...details, request_id: requestId });
      return;
    }
    const minute = Math.floor(now() / MINUTE_MS) * MINUTE_MS;
    const key = `${details.rig ?? ''}\0${details.bound ?? ''}\0${minute}`;
    const seen = pending.get(key);
    if (seen) seen.count++;
    else pending.set(key, { details, count: 1, minute });
    if (!timer) {
      timer = setTimeout(flush, minute + MINUTE_MS - now());
      timer.unref();
    }
  };
  return Object.assign(record, { flush });
}
