import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseNow } from '../../db/clock.ts';
import type { Database } from '../../db/index.ts';
import { heartbeatNode, readNodes, registerNode, stopNode, type NodeIdentity, type NodeRow, type RegisterResult } from '../../db/nodes.ts';
import { takeServeLock, type ServeLock } from '../../db/serve-lock.ts';
import { CannotStart } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { rigdVersion } from '../../version.ts';
import { LIVE_HEARTBEATS } from './live.ts';
import { RUN_ID } from './run-id.ts';
import { timeAgo } from '../time-ago.ts';
import { WritableSince } from './writable-since.ts';


/**
 * This `rigd serve` in the node registry (src/db/nodes.ts): registers at start under its instance
 * id and a run id of its own, refusing to start when a live node already holds the id; heartbeats
 * every heartbeatMs; marks itself stopped at a clean stop. Whether a holder is live is read from its
 * heartbeats (host names and pids say nothing across containers): a holder that looks live is
 * watched until its heartbeat would be stale; if it did not beat meanwhile (killed) it is taken over.
 * On SQLite one node serves a data_dir: it holds the data_dir's serve lock (src/db/serve-lock.ts),
 * and a second `rigd serve` there refuses at once, naming the live one.
 */
export class NodePresence {
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #registered = false;
  #lostWarned = false;
  #lock: ServeLock | undefined;
  readonly #self: NodeIdentity;
  /** Since when this node's heartbeats have written without a break (the alerts judge silence from it). */
  readonly writable: WritableSince;

  constructor(
    private readonly db: Database,
    instanceId: () => string,
    private readonly heartbeatMs: number,
    private readonly log: Logger,
    /** SQLite's data_dir (where the serve lock lives); undefined on PostgreSQL. */
    private readonly dataDir?: string,
  ) {
    // The id is read at start: `rigd serve` knows its port once it listens.
    this.#self = { get instanceId() { return instanceId(); }, runId: RUN_ID, hostname: hostname(), pid: process.pid, version: rigdVersion() };
    this.writable = new WritableSince(heartbeatMs, () => databaseNow(db));
  }

  get #staleMs(): number {
    return LIVE_HEARTBEATS * this.heartbeatMs;
  }

  async start(): Promise<void> {
    const self = { ...this.#self };
    await this.#lockDataDir(self);
    try {
      await this.#registerOrWait(self);
    } catch (err) {
      if (err instanceof CannotStart) throw err;
      // The database cannot take the write now (read-only, full, unreachable): rigd serves anyway and
      // /healthz names the fault; the node registers at the first heartbeat that can write.
      this.log.warn('registering this node failed; retrying at each heartbeat', { instance: self.instanceId, error: String(err) });
    }
    this.#timer = setInterval(() => {
      this.#beating ??= (this.#registered ? this.#beat(self) : this.#retryRegister(self)).finally(() => (this.#beating = undefined));
    }, this.heartbeatMs);
    this.#timer.unref();
  }

  /** SQLite: the data_dir's serve lock, or CannotStart naming the live node that holds it. */
  async #lockDataDir(self: NodeIdentity): Promise<void> {
    if (this.dataDir === undefined) return;
    const result = await takeServeLock(this.dataDir);
    if ('held' in result) {
      this.#lock = result.held;
      return;
    }
    if ('failed' in result) {
      // Read-only or failing disk: serve anyway (/healthz names the fault), one node by the registry alone.
      this.log.warn('the data_dir serve lock cannot be taken', { error: String(result.failed) });
      return;
    }
    const live = await readNodes(this.db).then(({ now, nodes }) => nodes.filter((n) => n.stoppedAt === null).map((n) => ({ n, ageMs: now.getTime() - n.heartbeatAt.getTime() })), () => []);
    live.sort((a, b) => a.ageMs - b.ageMs);
    const holder = live[0];
    if (holder) throw this.#taken(self, { holder: holder.n, heartbeatAgeMs: holder.ageMs });
    throw new CannotStart(`this data_dir is held by another live rigd serve (it holds ${this.dataDir}/serve.lock): on SQLite one rigd serve runs per data_dir; stop that one first`, 'data_dir_taken');
  }

  #tryRegister(self: NodeIdentity): Promise<RegisterResult> {
    return this.#written(registerNode(this.db, self, { staleMs: this.#staleMs, sole: this.#lock !== undefined }));
  }

  /** A write of this node's row, told to `writable` (whether the database took it). */
  async #written<T>(write: Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await write;
    } catch (err) {
      this.writable.failed();
      throw err;
    }
    await this.writable.wrote();
    return result;
  }

  /** Registers; a holder that looks live is given until its heartbeat would be stale to show it is. */
  async #registerOrWait(self: NodeIdentity): Promise<void> {
    let result = await this.#tryRegister(self);
    if (!result.registered) {
      const waitMs = Math.max(0, this.#staleMs - result.heartbeatAgeMs) + this.heartbeatMs;
      this.log.warn('a node that looks live holds this node\'s place; waiting for its next heartbeats', {
        instance: self.instanceId,
        holder: result.holder.instanceId,
        holder_host: result.holder.hostname,
        holder_pid: result.holder.pid,
        wait_ms: waitMs,
      });
      await sleep(waitMs);
      result = await this.#tryRegister(self);
    }
    if (!result.registered) throw this.#taken(self, result);
    this.#registered = true;
  }

  #taken(self: NodeIdentity, refused: { holder: NodeRow; heartbeatAgeMs: number }): CannotStart {
    const { holder, heartbeatAgeMs } = refused;
    const who = `(${holder.hostname}, pid ${holder.pid}, heartbeat ${timeAgo(new Date(Date.now() - heartbeatAgeMs), new Date(), { short: true })})`;
    if (holder.instanceId !== self.instanceId) {
      return new CannotStart(`this data_dir is held by a live node "${holder.instanceId}" ${who}: on SQLite one rigd serve runs per data_dir; stop that one first`, 'data_dir_taken');
    }
    return new CannotStart(
      `instance id "${self.instanceId}" is taken by a live node ${who}: give each node its own cluster.instance_id, or stop the other one`,
      'instance_taken',
    );
  }

  async #retryRegister(self: NodeIdentity): Promise<void> {
    try {
      const result = await this.#tryRegister(self);
      if (!result.registered) throw this.#taken(self, result);
      this.#registered = true;
      this.log.info('this node is registered', { instance: self.instanceId });
    } catch (err) {
      if (err instanceof CannotStart) {
        if (!this.#lostWarned) this.log.error(err.message, { instance: self.instanceId });
        this.#lostWarned = true;
      }
    }
  }

  async #beat(self: NodeIdentity): Promise<void> {
    try {
      const ours = await this.#written(heartbeatNode(this.db, self));
      if (!ours && !this.#lostWarned) this.log.error('this node\'s registration was taken over by another process with the same instance id', { instance: self.instanceId });
      this.#lostWarned = !ours;
    } catch (err) {
      this.log.warn('node heartbeat failed', { error: String(err) });
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#beating;
    if (this.#registered) {
      this.#registered = false;
      await stopNode(this.db, { ...this.#self }).catch((err) => this.log.warn('marking this node stopped failed', { error: String(err) }));
    }
    await this.#lock?.release();
    this.#lock = undefined;
  }
}
