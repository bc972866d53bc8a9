/**
 * Incidents: the sweep that opens, repeats and resolves them. It runs on the node holding the
 * cluster duties (src/services/cluster/duties.ts), every alerts.check_interval_s, by the database's
 * clock. Each transition is one conditional write in its own write transaction, and onIncident (the
 * delivery) runs inside it: a transition another node made first changes nothing here and calls
 * nothing, and a delivery that fails rolls its transition back (the next sweep tries again).
 */
import type { Config } from '../../config/schema.ts';
import { databaseNow } from '../../db/clock.ts';
import type { Database, Transaction } from '../../db/index.ts';
import * as incidents from '../../db/incidents.ts';
import type { IncidentRow } from '../../db/incidents.ts';
import { rigFacts, rigFactsOf } from '../../db/rigs/listing.ts';
import { silentLogger, type Logger } from '../../log.ts';
import type { BackgroundTask } from '../background-task.ts';
import { LIVE_HEARTBEATS } from '../cluster/live.ts';
import { compareRigIds, rigStatus } from '../rigs/status.ts';
import { CHECKS, type Condition } from './conditions.ts';
import type { IncidentEvent, OnIncident } from './event.ts';
import { rigdRunningSince } from './away.ts';
import { refreshRhythms } from './rhythm.ts';
import { outageRigs, planRigs, type RigNow } from './rig-plan.ts';
import { iso, outageOverText, outageText, rigBackText, rigOfEvent, rigOfflineText, type RigFacts } from './text.ts';

/** Whether a condition says more than its open incident's details (a text or a detail changed). */
function changed(details: Record<string, unknown>, c: Condition): boolean {
  return details.text !== c.text || Object.entries(c.details).some(([k, v]) => JSON.stringify(details[k]) !== JSON.stringify(v));
}

export interface AlertServiceOptions {
  /** Called inside the transaction of each transition (opened, repeated, resolved). */
  onIncident?: OnIncident;
  log?: Logger;
  /** This node's name (disk_low names the node whose disk is low). */
  instance?: () => string;
  /**
   * Since when this node has written the database without a break, given the sweep's now (src/services/cluster/writable-since.ts):
   * silence before it was the database's, not a node's or a rig's. @default no break known
   */
  writableSince?: (now: Date) => Date | null;
}

type AlertConfig = Pick<Config, 'alerts' | 'rigs' | 'server' | 'data_dir' | 'cluster'>;

export class AlertService implements BackgroundTask {
  readonly #db: Database;
  readonly #config: AlertConfig;
  readonly #onIncident: OnIncident | undefined;
  readonly #log: Logger;
  readonly #instance: () => string;
  readonly #writableSince: (now: Date) => Date | null;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(db: Database, config: AlertConfig, opts: AlertServiceOptions = {}) {
    this.#db = db;
    this.#config = config;
    this.#onIncident = opts.onIncident;
    this.#log = opts.log ?? silentLogger;
    this.#instance = opts.instance ?? (() => 'this node');
    this.#writableSince = opts.writableSince ?? (() => null);
  }

  start(): void {
    if (this.#timer) return;
    void this.#tick();
    this.#timer = setInterval(() => void this.#tick(), this.#config.alerts.check_interval_s * 1000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }

  #tick(): Promise<void> {
    this.#sweeping ??= this.sweep()
      .catch((err: unknown) => this.#log.warn('alerts sweep failed', { error: String(err) }))
      .finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  /** One pass of every check (the timer's; tests call it directly). */
  async sweep(): Promise<void> {
    await refreshRhythms(this.#db);
    const now = await databaseNow(this.#db);
    const open = await incidents.openIncidents(this.#db.reader);
    // Silence while the database could not be written (no heartbeat, no report could be stored) is nobody's.
    const writable = this.#writableSince(now);
    await this.#sweepRigs(now, open, writable);
    await this.#sweepConditions(now, open, writable);
    await this.#repeats(now);
  }

  /** Runs one transition; onIncident with its event, in its transaction, when this call made it. */
  async #transition(what: string, write: (t: Transaction) => Promise<IncidentEvent | null>): Promise<void> {
    try {
      await this.#db.writes.run(async (t) => {
        const event = await write(t);
        if (event && this.#onIncident) await this.#onIncident(event, t);
        if (event) this.#log.info('incident', { event: event.event, kind: event.incident.kind, id: event.incident.id, subject: event.incident.subject });
      });
    } catch (err) {
      this.#log.warn('an incident transition failed; the next sweep tries again', { transition: what, error: String(err) });
    }
  }

  #event(event: IncidentEvent['event'], row: { id: number; kind: string; subject: string | null; opened_at: Date }, resolvedAt: Date | null, text: string, rig?: RigFacts, rigs?: string[]): IncidentEvent {
    return {
      event,
      incident: { id: row.id, kind: row.kind, subject: row.subject, opened_at: iso(row.opened_at), resolved_at: resolvedAt ? iso(resolvedAt) : null },
      rig: rigOfEvent(rig),
      ...(rigs ? { rigs } : {}),
      text,
    };
  }

  #open(kind: string, subject: string | null, now: Date, details: Record<string, unknown>, text: string, rig?: RigFacts, rigs?: string[]): Promise<void> {
    return this.#transition(`open ${kind}`, async (t) => {
      const id = await incidents.insertIncident(this.#db, { kind, subject, at: now, details: { ...details, text } }, t);
      return id === null ? null : this.#event('opened', { id, kind, subject, opened_at: now }, null, text, rig, rigs);
    });
  }

  #resolve(row: IncidentRow, now: Date, details: Record<string, unknown>, text: string, rig?: RigFacts, rigs?: string[]): Promise<void> {
    return this.#transition(`resolve ${row.kind}`, async (t) =>
      (await incidents.resolveIncident(this.#db, row.id, now, { ...row.details, ...details }, t)) ? this.#event('resolved', row, now, text, rig, rigs) : null,
    );
  }

  #update(row: IncidentRow, details: Record<string, unknown>, count: number): Promise<void> {
    return this.#transition(`update ${row.kind}`, async (t) => (await incidents.updateOpenIncident(this.#db, row, { ...row.details, ...details }, count, t), null));
  }

  async #sweepRigs(now: Date, open: IncidentRow[], writable: Date | null): Promise<void> {
    const facts = await rigFacts(this.#db.reader);
    const byId = new Map(facts.map((r) => [r.id, r]));
    const rhythm = (r: RigFacts) => ({ interval_s: r.report_interval_s === null ? null : Number(r.report_interval_s), intervals: r.report_intervals === null ? null : Number(r.report_intervals) });
    // Silence while rigd itself was away, or the database, does not count: from the latest of the last
    // report, rigd's return and the database's.
    const away = (await rigdRunningSince(this.#db, now, LIVE_HEARTBEATS * this.#config.cluster.heartbeat_s * 1000))?.getTime() ?? -Infinity;
    const back = Math.max(away, writable?.getTime() ?? -Infinity);
    const rigs: RigNow[] = facts.map((r) => {
      const learned = rhythm(r);
      const lastSeen = new Date(r.last_seen_at);
      const silentFrom = new Date(Math.max(lastSeen.getTime(), back));
      return {
        id: r.id,
        lastSeen,
        status: rigStatus(lastSeen, now, this.#config, learned),
        silence: rigStatus(silentFrom, now, this.#config, learned),
        intervalS: learned.interval_s ?? this.#config.rigs.online_after_s,
      };
    });
    const settleS = 3600 / this.#config.alerts.flaps_per_hour;
    const openRig = new Map(open.filter((i) => i.kind === 'rig_offline' && i.subject !== null).map((i) => [i.subject!, i]));
    const outage = open.find((i) => i.kind === 'fleet_outage') ?? null;
    const plan = planRigs({ rigs, openRigIncidents: openRig, outage, outageShare: this.#config.alerts.outage_share, settleS, now });

    if (plan.resolveOutage) {
      const { incident } = plan.resolveOutage;
      // In the fleet's order (rig7 before rig8, rig10 after rig9), whatever order the plan found them in.
      const missing = [...plan.resolveOutage.missing].sort(compareRigIds);
      await this.#resolve(incident, now, { missing }, outageOverText(outageRigs(incident).length, missing), undefined, missing);
    }
    if (plan.openOutage) {
      const ids = [...plan.openOutage].sort(compareRigIds);
      const since = new Date(Math.min(...ids.map((id) => new Date(byId.get(id)!.last_seen_at).getTime())));
      await this.#open('fleet_outage', null, now, { rigs: ids, fleet: rigs.length, silent_since: iso(since) }, outageText(ids, rigs.length, since), undefined, ids);
    }
    if (plan.joinOutage.length > 0 && outage) await this.#update(outage, { rigs: [...outageRigs(outage), ...plan.joinOutage] }, outage.count);
    for (const inc of plan.resolveRig) {
      const rig = byId.get(inc.subject!);
      await this.#resolve(inc, now, { back_at: null }, rig ? rigBackText(rig, inc.opened_at) : `rig ${inc.subject} forgotten`, rig);
    }
    for (const inc of plan.markBack) await this.#update(inc, { back_at: iso(now) }, inc.count);
    for (const inc of plan.fold) await this.#update(inc, { back_at: null }, inc.count + 1);
    for (const id of plan.openRig) await this.#openRig(byId.get(id)!, now, settleS, rhythm(byId.get(id)!).interval_s);
  }

  /** A rig_offline incident for a rig, or, when its last one resolved within the flap window, that one reopened. */
  async #openRig(rig: RigFacts, now: Date, settleS: number, intervalS: number | null): Promise<void> {
    const last = await incidents.latestIncident(this.#db, 'rig_offline', rig.id);
    if (last?.resolved_at && now.getTime() - last.resolved_at.getTime() < settleS * 1000) {
      const text = rigOfflineText(rig, intervalS, last.count + 1);
      await this.#transition('reopen rig_offline', async (t) =>
        (await incidents.reopenIncident(this.#db, last, now, { ...last.details, text, back_at: null }, t)) ? this.#event('opened', last, null, text, rig) : null,
      );
      return;
    }
    await this.#open('rig_offline', rig.id, now, { last_seen: iso(rig.last_seen_at), interval_s: intervalS }, rigOfflineText(rig, intervalS, 1), rig);
  }

  async #sweepConditions(now: Date, open: IncidentRow[], writableSince: Date | null): Promise<void> {
    const instance = this.#instance();
    const subjects = (kind: string) => open.filter((i) => i.kind === kind).map((i) => i.subject ?? '');
    const ctx = { reader: this.#db.reader, config: this.#config, now, instance, writableSince, openFailed: subjects('capture_failed'), openDown: subjects('node_down'), backlogOpen: open.some((i) => i.kind === 'ingest_backlog') };
    const rigs = new Map<string, RigFacts>();
    for (const check of CHECKS) {
      let held: Condition[];
      try {
        held = await check.run(ctx);
      } catch (err) {
        this.#log.warn('an alerts check failed', { kinds: check.kinds, error: String(err) });
        continue;
      }
      const heldKeys = new Set(held.map((c) => incidents.openKey(c.kind, c.subject)));
      const openByKey = new Map(open.map((i) => [incidents.openKey(i.kind, i.subject), i]));
      for (const c of held) {
        const inc = openByKey.get(incidents.openKey(c.kind, c.subject));
        if (inc) {
          if (c.refresh && changed(inc.details, c)) await this.#update(inc, { ...c.details, text: c.text }, inc.count);
          continue;
        }
        const rig = c.rig ? (rigs.get(c.rig) ?? (await this.#rig(c.rig))) : undefined;
        if (rig) rigs.set(rig.id, rig);
        await this.#open(c.kind, c.subject, now, c.details, c.text, rig);
      }
      for (const inc of open) {
        if (!check.kinds.includes(inc.kind as (typeof check.kinds)[number]) || heldKeys.has(incidents.openKey(inc.kind, inc.subject))) continue;
        // disk_low is about the disk of the node that found it: only that node sees it end.
        if (inc.kind === 'disk_low' && inc.subject !== instance) continue;
        await this.#resolve(inc, now, {}, `resolved: ${String(inc.details.text ?? inc.kind)}`);
      }
    }
  }

  async #rig(id: string): Promise<RigFacts | undefined> {
    return rigFactsOf(this.#db.reader, id);
  }

  /** Open, unacknowledged incidents last notified repeat_s ago or more: notified again. */
  async #repeats(now: Date): Promise<void> {
    const every = this.#config.alerts.repeat_s;
    if (every <= 0) return;
    for (const inc of await incidents.openIncidents(this.#db.reader)) {
      if (inc.acked_at || now.getTime() - inc.last_notified_at.getTime() < every * 1000) continue;
      const rig = inc.kind === 'rig_offline' && inc.subject ? await this.#rig(inc.subject) : undefined;
      const text = `still open since ${iso(inc.opened_at)}: ${String(inc.details.text ?? inc.kind)}`;
      const rigs = inc.kind === 'fleet_outage' ? outageRigs(inc) : undefined;
      await this.#transition(`repeat ${inc.kind}`, async (t) => ((await incidents.repeatIncident(this.#db, inc.id, inc.last_notified_at, now, t)) ? this.#event('repeated', inc, null, text, rig, rigs) : null));
    }
  }
}
