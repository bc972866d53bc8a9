/**
 * Rig reports, group-committed: each batch is judged against the bindings of its rig ids (binding.ts)
 * in the transaction that stores it, and only the reports it accepts are stored. A refused report
 * stores nothing; its verdict goes back to its caller.
 */
import type { Config } from '../../config/schema.ts';
import type { Batcher, Database, Transaction } from '../../db/index.ts';
import { readBindings, readRegistrations, storeRigReports, writeBindings, type ReportRow } from '../../db/rigs.ts';
import { judgeBatch, registrationWindowStart, type GateItem, type Verdict } from './binding.ts';
import type { RigReportInput } from './report-input.ts';

export interface QueuedReport extends RigReportInput {
  peer: string;
  /** null: received now by the database's clock (src/db/rigs.ts); a Date only from an injected clock. */
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

/** Two addresses registered one new id at once (PostgreSQL): the batch is retried report by report. */
class RegistrationRace extends Error {
  override name = 'RegistrationRace';
}

interface Judged {
  verdicts: Verdict[];
  rows: ReportRow[];
  bindings: { id: string; address: string }[];
  registered: QueuedReport[];
}

export class ReportBatches {
  readonly #db: Database;
  readonly #config: Readonly<Config>;
  readonly #batcher: Batcher<QueuedReport, Verdict>;

  constructor(db: Database, config: Readonly<Config>, inFlight: number) {
    this.#db = db;
    this.#config = config;
    // One rig's reports never commit in two batches at once: they go in order, and a node stopped
    // mid-batch holds a rig's row in one transaction only (another node waits for one idle timeout).
    this.#batcher = db.writes.batcher((items, t) => this.#apply(items, t), { inFlight, keyOf: (r) => r.rigId });
  }

  /**
   * Resolves once the batch holding the report has committed, with what became of it. A report that
   * lost a race to register its id goes again: the winner has committed by then, so it is judged
   * against the winner's binding.
   */
  async submit(report: QueuedReport): Promise<Verdict> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#batcher.submit(report);
      } catch (err) {
        if (!(err instanceof RegistrationRace) || attempt >= 3) throw err;
      }
    }
  }

  async #judge(items: QueuedReport[], t?: Transaction): Promise<Judged> {
    const ids = new Set<string>();
    for (const item of items) ids.add(item.rigId);
    const rigs = await readBindings(this.#db, [...ids], t);
    const newcomers = new Set<string>();
    for (const item of items) if (!rigs.has(item.rigId)) newcomers.add(item.peer);
    // The registration window is judged by this node's clock (one now for the batch) unless a clock
    // was injected. Each report is judged at its time: only the fields the gate reads, per report.
    const now = new Date();
    const gate: GateItem[] = new Array(items.length);
    let earliest: Date | null = null;
    for (let k = 0; k < items.length; k++) {
      const item = items[k]!;
      const at = item.receivedAt ?? now;
      if (earliest === null || at < earliest) earliest = at;
      gate[k] = { rigId: item.rigId, peer: item.peer, receivedAt: at };
    }
    const registrations = await readRegistrations(this.#db, [...newcomers], registrationWindowStart(earliest ?? now), t);
    const verdicts = judgeBatch(this.#config.rigs, gate, rigs, registrations);
    const judged: Judged = { verdicts, rows: [], bindings: [], registered: [] };
    for (let k = 0; k < items.length; k++) {
      const v = verdicts[k]!;
      if (v.kind !== 'store') continue;
      const item = items[k]!;
      judged.rows.push(reportRow(item));
      if (v.bind) judged.bindings.push({ id: item.rigId, address: item.peer });
      if (v.register) judged.registered.push(item);
    }
    return judged;
  }

  async #write(judged: Judged, t: Transaction): Promise<void> {
    if (judged.rows.length === 0) return;
    await storeRigReports(this.#db, judged.rows, t);
    await writeBindings(this.#db, judged.bindings, t);
    // Another batch (PostgreSQL: beside this one, or on another node) may have registered the same new
    // id from another address at the same time: then the upsert updated its row instead of inserting
    // ours. Retried alone, the report is judged again. Read back whatever the engine.
    if (judged.registered.length > 0 && this.#config.rigs.address_binding !== 'off') {
      const now = await readBindings(this.#db, judged.registered.map((r) => r.rigId), t);
      if (judged.registered.some((r) => now.get(r.rigId)?.bound_address !== r.peer)) throw new RegistrationRace('a rig id was registered from two addresses at once');
    }
  }

  /** One transaction for a whole batch: judged under the rows' locks, then stored. */
  async #apply(items: QueuedReport[], t: Transaction): Promise<Verdict[]> {
    const judged = await this.#judge(items, t);
    await this.#write(judged, t);
    return judged.verdicts;
  }
}
