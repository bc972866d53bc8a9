import { Op } from 'sequelize';
import { dbNow, dbTime } from './clock.ts';
import type { Database } from './index.ts';
import { forEngine } from './dialect/engine.ts';
import type { Reader } from './reader.ts';

/**
 * The node registry: every `rigd serve` sharing this database has a row under its instance id,
 * written at start, touched every heartbeat and marked stopped on a clean shutdown. A row belongs
 * to one process run through its run id (random, drawn at start): host names and pids say nothing
 * across containers (two nodes may both be PID 1 on a host called "gateway"). Times come from the
 * database's clock (PostgreSQL's now(): nodes on several hosts compare with one clock).
 */

/** What a node says about itself when it registers. */
export interface NodeIdentity {
  instanceId: string;
  /** Random per process run: the row is this run's while it carries it. */
  runId: string;
  hostname: string;
  pid: number;
  version: string;
}

/** A registered node as stored. */
export interface NodeRow extends NodeIdentity {
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
}

export type RegisterResult = { registered: true } | { registered: false; holder: NodeRow; heartbeatAgeMs: number };

export interface RegisterOptions {
  /** A node is live while its heartbeat is younger than this. */
  staleMs: number;
  /**
   * This process holds the database alone (SQLite: its data_dir's serve lock, src/db/serve-lock.ts):
   * every other node not marked stopped is known dead, and is marked stopped now.
   */
  sole?: boolean;
}

type Stored = { instance_id: string; run_id: string | null; hostname: string; pid: number; version: string; started_at: Date; heartbeat_at: Date; stopped_at: Date | null };

/**
 * Registers `self` under its instance id, unless a live node holds it: one that has not stopped
 * and whose heartbeat is younger than staleMs (unless this process is the sole node). A row of
 * this very run (same run id) is its own. Otherwise the row is taken over (started and heartbeat now). The
 * check and the write are one write transaction, the row locked on PostgreSQL.
 */
export async function registerNode(db: Database, self: NodeIdentity, opts: RegisterOptions): Promise<RegisterResult> {
  const { Node } = db.models;
  return db.writes.run(async (transaction) => {
    const now = await dbNow(db.sequelize, transaction);
    const liveHolder = (row: Stored): RegisterResult | null => {
      const holder = toNodeRow(row);
      const heartbeatAgeMs = now.getTime() - holder.heartbeatAt.getTime();
      if (opts.sole || holder.runId === self.runId || holder.stoppedAt !== null || heartbeatAgeMs >= opts.staleMs) return null;
      return { registered: false, holder, heartbeatAgeMs };
    };
    if (opts.sole) {
      await Node.update({ stopped_at: dbTime(db.sequelize) }, { where: { instance_id: { [Op.ne]: self.instanceId }, stopped_at: null }, transaction });
    }
    const row = await Node.findByPk(self.instanceId, { transaction, lock: forEngine(db.dialect.name, { postgres: transaction.LOCK.UPDATE, sqlite: undefined }) });
    const values = { run_id: self.runId, hostname: self.hostname, pid: self.pid, version: self.version, started_at: dbTime(db.sequelize), heartbeat_at: dbTime(db.sequelize), stopped_at: null };
    if (!row) {
      // Two nodes registering one new id at once: the second insert fails on the primary key.
      await Node.create({ instance_id: self.instanceId, ...values }, { transaction });
      return { registered: true };
    }
    const refused = liveHolder(row);
    if (refused) return refused;
    await row.update(values, { transaction });
    return { registered: true };
  });
}

/** The node's heartbeat; false when its row belongs to another run now (it was taken over). */
export async function heartbeatNode(db: Database, self: Pick<NodeIdentity, 'instanceId' | 'runId'>): Promise<boolean> {
  const [n] = await db.writes.run((transaction) =>
    db.models.Node.update({ heartbeat_at: dbTime(db.sequelize) }, { where: { instance_id: self.instanceId, run_id: self.runId, stopped_at: null }, transaction }),
  );
  return n === 1;
}

/** Marks the node stopped (a clean shutdown): its id is free at once. */
export async function stopNode(db: Database, self: Pick<NodeIdentity, 'instanceId' | 'runId'>): Promise<void> {
  await db.writes.run((transaction) =>
    db.models.Node.update({ stopped_at: dbTime(db.sequelize) }, { where: { instance_id: self.instanceId, run_id: self.runId, stopped_at: null }, transaction }),
  );
}

/** Every registered node and the database's now (the one clock their times compare with). */
export async function readNodes(db: Database): Promise<{ now: Date; nodes: NodeRow[] }> {
  const now = await dbNow(db.sequelize);
  const rows = await db.models.Node.findAll();
  return { now, nodes: rows.map(toNodeRow) };
}

function toNodeRow(row: Stored): NodeRow {
  return {
    instanceId: row.instance_id,
    runId: row.run_id ?? '',
    hostname: row.hostname,
    pid: Number(row.pid),
    version: row.version,
    startedAt: new Date(row.started_at),
    heartbeatAt: new Date(row.heartbeat_at),
    stoppedAt: row.stopped_at === null ? null : new Date(row.stopped_at),
  };
}

/** The nodes not stopped and their last heartbeat, in no particular order. */
export function runningNodes(reader: Reader): Promise<{ instance_id: string; hostname: string; heartbeat_at: string | Date }[]> {
  return reader.all<{ instance_id: string; hostname: string; heartbeat_at: string | Date }>('SELECT instance_id, hostname, heartbeat_at FROM nodes WHERE stopped_at IS NULL');
}
