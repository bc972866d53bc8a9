import { isIP } from 'node:net';
import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { Config } from '../../config/schema.ts';
import type { Batcher, Database } from '../../db/index.ts';
import type { Rig, RigReport } from '../../db/models/index.ts';
import { storeRigReports, storeRigReportsAsScript, type ReportRow } from '../../db/rig-reports.ts';
import { InvalidInput, NotFound } from '../../errors.ts';
import { parseRigId, parseRigReport, type RigReportInput } from './report-input.ts';
import { RigRetention, type RetentionOptions } from './retention.ts';
import { RigListCache } from './list-cache.ts';
import { listRigs, rigView } from './queries.ts';
import type { RigStatus } from './status.ts';

/** A rig as tools and pages see it. */
export interface RigView {
  id: string;
  status: RigStatus;
  last_seen_at: Date;
  serial: string;
  lan_ip: string | null;
  vpn_address: string;
  /** <id>.<vpn.rig_domain> */
  vpn_name: string;
  version: string;
  branch: string;
  latitude: number | null;
  longitude: number | null;
  current_project: string | null;
  created_at: Date;
}

/** One history row (device location record): a stored report without its rig id. */
export type RigReportView = Omit<ReportRow, 'rig_id' | 'received_at'> & { received_at: Date };

export interface HistoryQuery {
  since?: Date;
  until?: Date;
  limit?: number;
}

/** Default and largest page of history. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 10_000;

interface QueuedReport extends RigReportInput {
  peer: string;
  /** null: received now by the database's clock (src/db/rig-reports.ts); a Date only from an injected clock. */
  receivedAt: Date | null;
}

/** A queued report as the row it stores. */
function reportRow(r: QueuedReport): ReportRow {
  return {
    rig_id: r.rigId,
    received_at: r.receivedAt,
    serial: r.serial,
    lan_ip: r.lanIp,
    peer_address: r.peer,
    version: r.version,
    branch: r.branch,
    latitude: r.latitude,
    longitude: r.longitude,
  };
}

/** Rig reports (group-committed), the rig list with its computed status, and report history. */
export class RigService {
  readonly retention: RigRetention;
  /** The rig list and the listing bodies built from it, once per generation (list-cache.ts). */
  readonly listing: RigListCache;
  readonly #db: Database;
  readonly #config: Readonly<Config>;
  readonly #reports: Batcher<QueuedReport, void>;
  readonly #now: () => Date;
  readonly #fixedClock: boolean;
  readonly #onReported: (peer: string) => void;

  constructor(
    db: Database,
    config: Readonly<Config>,
    opts: {
      now?: () => Date;
      retention?: RetentionOptions;
      /** Runs after a report from `peer` is committed. */
      onReported?: (peer: string) => void;
      /** Report batches committing at once. @default db.writes.besideWrites (1 on SQLite) */
      reportWriters?: number;
    } = {},
  ) {
    this.#db = db;
    this.#config = config;
    this.#now = opts.now ?? (() => new Date());
    this.#fixedClock = opts.now !== undefined;
    this.#onReported = opts.onReported ?? (() => undefined);
    this.#reports = db.writes.batcher((items, t) => this.#applyReports(items, t), {
      inFlight: opts.reportWriters ?? db.writes.besideWrites,
      // SQLite: the batch as one script, two trips through the driver instead of four.
      direct: (items, onStart) => storeRigReportsAsScript(this.#db, items.map(reportRow), onStart)?.then(() => items.map(() => undefined)) ?? null,
    });
    this.listing = new RigListCache(db.reader, config, { now: this.#now });
    this.retention = new RigRetention(db, config.rigs.history_retention_days, opts.retention);
  }

  /**
   * Validates and stores one report of rig `rawId` from VPN address `peer`: updates (or registers)
   * the rig and appends a history row. Resolves only after the batch holding it has committed.
   */
  async report(rawId: string, payload: unknown, peer: string): Promise<void> {
    const input = parseRigReport(rawId, payload);
    if (!isIP(peer)) throw new InvalidInput('the client address is unknown');
    await this.#reports.submit({ ...input, peer, receivedAt: this.#fixedClock ? this.#now() : null });
    this.#onReported(peer);
  }

  /** One transaction for a whole batch (two statements, whatever its size). */
  async #applyReports(items: QueuedReport[], transaction: Transaction): Promise<void[]> {
    await storeRigReports(this.#db, items.map(reportRow), transaction);
    return items.map(() => undefined);
  }

  #view(rig: Rig, now: Date): RigView {
    return rigView(rig, this.#config, now);
  }

  /** Every rig in natural id order (rig2 before rig10), optionally only those with one status. Reads only the rigs table. */
  list(opts: { status?: RigStatus } = {}): Promise<RigView[]> {
    return listRigs(this.#db.reader, this.#config, this.#now(), opts.status);
  }

  async get(rawId: string): Promise<RigView> {
    const rig = (await this.#db.models.Rig.findByPk(parseRigId(rawId), { raw: true })) as Rig | null;
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
    const window: Record<symbol, Date> = {};
    if (q.since) window[Op.gte] = q.since;
    if (q.until) window[Op.lt] = q.until;
    const where: WhereOptions<RigReport> = { rig_id: rig.id, ...(q.since || q.until ? { received_at: window } : {}) };
    const rows = (await this.#db.models.RigReport.findAll({
      where,
      order: [
        ['received_at', 'DESC'],
        ['id', 'DESC'],
      ],
      limit,
      raw: true,
    })) as RigReport[];
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
