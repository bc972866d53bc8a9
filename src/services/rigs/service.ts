import { isIP } from 'node:net';
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/index.ts';
import { reportsOf, rigBoundTo, setBinding } from '../../db/rigs.ts';
import { rigRow } from '../../db/rigs/listing.ts';
import { InvalidInput, NotFound } from '../../errors.ts';
import { silentLogger } from '../../log.ts';
import { identityEvents, type RecordIdentityEvent } from './identity-events.ts';
import { rigNotFound } from './lookup.ts';
import { ReportBatches } from './report-batches.ts';
import { parseRigId, parseRigReport } from './report-input.ts';
import { RigRetention, type RetentionOptions } from './retention.ts';
import { RigListCache } from './list-cache.ts';
import { listRigs } from './queries.ts';
import { rigView, type RigReportView, type RigRow, type RigView } from './view.ts';
import type { RigStatus } from './status.ts';

export interface HistoryQuery {
  since?: Date;
  until?: Date;
  limit?: number;
}

/** Default and largest page of history. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 10_000;

/** Rig reports (group-committed), the rig list with its computed status, and report history. */
export class RigService {
  readonly retention: RigRetention;
  /** The rig list and the listing bodies built from it, once per generation (list-cache.ts). */
  readonly listing: RigListCache;
  readonly #db: Database;
  readonly #config: Readonly<Config>;
  readonly #reports: ReportBatches;
  readonly #now: () => Date;
  readonly #fixedClock: boolean;
  readonly #onReported: (peer: string) => void;
  readonly #events: RecordIdentityEvent;

  constructor(
    db: Database,
    config: Readonly<Config>,
    opts: {
      now?: () => Date;
      retention?: RetentionOptions;
      /** Runs after a report from `peer` is committed, and for an address an id was moved from. */
      onReported?: (peer: string) => void;
      /** Where refusals, takeovers and rebinds are recorded. @default logged nowhere */
      events?: RecordIdentityEvent;
      /** Report batches committing at once. @default db.writes.besideWrites (1 on SQLite) */
      reportWriters?: number;
    } = {},
  ) {
    this.#db = db;
    this.#config = config;
    this.#now = opts.now ?? (() => new Date());
    this.#fixedClock = opts.now !== undefined;
    this.#onReported = opts.onReported ?? (() => undefined);
    this.#events = opts.events ?? identityEvents(silentLogger);
    this.#reports = new ReportBatches(db, config, opts.reportWriters ?? db.writes.besideWrites);
    this.listing = new RigListCache(db.reader, config, { now: this.#now });
    this.retention = new RigRetention(db, config.rigs.history_retention_days, opts.retention);
  }

  /**
   * Validates and stores one report of rig `rawId` from VPN address `peer`: updates (or registers)
   * the rig and appends a history row. Resolves only after the batch holding it has committed.
   * A report its id's binding refuses (rigs.address_binding) throws Conflict, one over the new ids
   * per address Throttled; nothing of either is stored. `requestId` goes on the identity event's line.
   */
  async report(rawId: string, payload: unknown, peer: string, requestId?: string): Promise<void> {
    const input = parseRigReport(rawId, payload);
    if (!isIP(peer)) throw new InvalidInput('the client address is unknown');
    // Written out, not spread: a spread copy of the input was the largest cost of this function.
    const verdict = await this.#reports.submit({
      rigId: input.rigId,
      serial: input.serial,
      lanIp: input.lanIp,
      version: input.version,
      branch: input.branch,
      latitude: input.latitude,
      longitude: input.longitude,
      peer,
      receivedAt: this.#fixedClock ? this.#now() : null,
    });
    if (verdict.event) this.#events(verdict.event.kind, verdict.event.details, requestId);
    if (verdict.kind === 'refuse') throw verdict.error;
    this.#onReported(peer);
    const from = verdict.event?.details.from;
    if (typeof from === 'string') this.#onReported(from);
  }

  /** `rigd rigs rebind ID ADDRESS`: binds the rig to ADDRESS (its reports from anywhere else are refused); returns the address as stored. */
  async rebind(rawId: string, address: string): Promise<string> {
    const id = parseRigId(rawId);
    if (!isIP(address)) throw new InvalidInput('address must be an IP address', [{ field: 'address', message: 'not an IP address' }]);
    // As reports see peers: an IPv4-mapped IPv6 address is its IPv4 address.
    const bound = address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    const before = await rigRow(this.#db.reader, id);
    if (!before || !(await setBinding(this.#db, id, bound))) throw rigNotFound(rawId);
    this.#events('rig_rebind', { rig: id, from: before.bound_address ?? null, to: bound });
    return bound;
  }

  /** `rigd rigs forget ID`: unbinds the rig; the next report, from any address, binds it again. History stays. */
  async forget(rawId: string): Promise<void> {
    const id = parseRigId(rawId);
    const before = await rigRow(this.#db.reader, id);
    if (!before || !(await setBinding(this.#db, id, null))) throw rigNotFound(rawId);
    this.#events('rig_forget', { rig: id, from: before.bound_address ?? null });
  }

  /** The rig bound to VPN address `address` that reported last, or null. */
  boundTo(address: string): Promise<string | null> {
    return rigBoundTo(this.#db, address);
  }

  #view(rig: RigRow, now: Date): RigView {
    return rigView(rig, this.#config, now);
  }

  /** Every rig in natural id order (rig2 before rig10), optionally only those with one status. Reads only the rigs table. */
  list(opts: { status?: RigStatus } = {}): Promise<RigView[]> {
    return listRigs(this.#db.reader, this.#config, this.#now(), opts.status);
  }

  async get(rawId: string): Promise<RigView> {
    const rig = await rigRow(this.#db.reader, parseRigId(rawId));
    if (!rig) throw new NotFound('rig', 'rig_not_found');
    return this.#view(rig, this.#now());
  }

  /** A rig's reports, newest first, within [since, until), at most `limit` (capped). */
  async history(rawId: string, q: HistoryQuery = {}): Promise<RigReportView[]> {
    const rig = await this.get(rawId);
    const limit = q.limit ?? HISTORY_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) {
      throw new InvalidInput(`limit must be between 1 and ${HISTORY_MAX_LIMIT}`, [{ field: 'limit', message: 'out of range' }]);
    }
    const rows = await reportsOf(this.#db, rig.id, { since: q.since, until: q.until, limit });
    return rows.map((r) => ({
      received_at: new Date(r.received_at),
      serial: r.serial,
      lan_ip: r.lan_ip,
      peer_address: r.peer_address,
      version: r.version,
      branch: r.branch,
      latitude: r.latitude,
      longitude: r.longitude,
    }));
  }
}
