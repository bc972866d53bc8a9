import { dbNow, dbTime } from './clock.ts';
import type { Database } from './index.ts';

/**
 * The node registry: every `rigd serve` sharing this database has a row under its instance id,
 * written at start, touched every heartbeat and marked stopped on a clean shutdown. Times come from
 * the database's clock (PostgreSQL's now(): nodes on several hosts compare with one clock).
 */

/** What a node says about itself when it registers. */
export interface NodeIdentity {
  instanceId: string;
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

/**
 * Registers `self` under its instance id, unless a live node holds it: one that has not stopped,
 * whose heartbeat is younger than staleMs, and that `isGone` does not know to be dead (a node of
 * this host whose pid no longer exists, say). Otherwise the row is taken over (started and
 * heartbeat now). The check and the write are one write transaction, the row locked on PostgreSQL.
 */
export async function registerNode(db: Database, self: NodeIdentity, staleMs: number, isGone: (holder: NodeRow) => boolean): Promise<RegisterResult> {
  const { Node } = db.models;
  return db.writes.run(async (transaction) => {
    const now = await dbNow(db.sequelize, transaction);
    const row = await Node.findByPk(self.instanceId, { transaction, lock: db.dialect.name === 'postgres' ? transaction.LOCK.UPDATE : undefined });
    const values = { hostname: self.hostname, pid: self.pid, version: self.version, started_at: dbTime(db.sequelize), heartbeat_at: dbTime(db.sequelize), stopped_at: null };
    if (!row) {
      // Two nodes registering one new id at once: the second insert fails on the primary key.
      await Node.create({ instance_id: self.instanceId, ...values }, { transaction });
      return { registered: true };
    }
    const holder = toNodeRow(row);
    const heartbeatAgeMs = now.getTime() - holder.heartbeatAt.getTime();
    const mine = holder.hostname === self.hostname && holder.pid === self.pid;
    if (!mine && holder.stoppedAt === null && heartbeatAgeMs < staleMs && !isGone(holder)) return { registered: false, holder, heartbeatAgeMs };
    await row.update(values, { transaction });
    return { registered: true };
  });
}

/** The node's heartbeat; false when its row names another process now (it was taken over). */
export async function heartbeatNode(db: Database, self: Pick<NodeIdentity, 'instanceId' | 'hostname' | 'pid'>): Promise<boolean> {
  const [n] = await db.writes.run((transaction) =>
    db.models.Node.update(
      { heartbeat_at: dbTime(db.sequelize) },
      { where: { instance_id: self.instanceId, hostname: self.hostname, pid: self.pid, stopped_at: null }, transaction },
    ),
  );
  return n === 1;
}

/** Marks the node stopped (a clean shutdown): its id is free at once. */
export async function stopNode(db: Database, self: Pick<NodeIdentity, 'instanceId' | 'hostname' | 'pid'>): Promise<void> {
  await db.writes.run((transaction) =>
    db.models.Node.update(
      { stopped_at: dbTime(db.sequelize) },
      { where: { instance_id: self.instanceId, hostname: self.hostname, pid: self.pid, stopped_at: null }, transaction },
    ),
  );
}

function toNodeRow(row: { instance_id: string; hostname: string; pid: number; version: string; started_at: Date; heartbeat_at: Date; stopped_at: Date | null }): NodeRow {
  return {
    instanceId: row.instance_id,
    hostname: row.hostname,
    pid: Number(row.pid),
    version: row.version,
    startedAt: new Date(row.started_at),
    heartbeatAt: new Date(row.heartbeat_at),
    stoppedAt: row.stopped_at === null ? null : new Date(row.stopped_at),
  };
}
