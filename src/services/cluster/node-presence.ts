import { hostname } from 'node:os';
import type { Database } from '../../db/index.ts';
import { heartbeatNode, registerNode, stopNode, type NodeIdentity } from '../../db/nodes.ts';
import { CannotStart } from '../../errors.ts';
import { hostProcessIsGone } from '../../jobs/lease-owner.ts';
import type { Logger } from '../../log.ts';
import { rigdVersion } from '../../version.ts';
import { LIVE_HEARTBEATS } from './live.ts';


/**
 * This `rigd serve` in the node registry (src/db/nodes.ts): registers at start, refusing to start
 * when a live node already holds the instance id; heartbeats every heartbeatMs; marks itself
 * stopped at a clean stop. A holder whose heartbeat is stale, or a process of this host that no
 * longer exists (the previous run, killed), does not stand in the way.
 */
export class NodePresence {
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #registered = false;
  #lostWarned = false;
  readonly #self: NodeIdentity;

  constructor(
    private readonly db: Database,
    instanceId: () => string,
    private readonly heartbeatMs: number,
    private readonly log: Logger,
  ) {
    // The id is read at start: `rigd serve` knows its port once it listens.
    this.#self = { get instanceId() { return instanceId(); }, hostname: hostname(), pid: process.pid, version: rigdVersion() };
  }

  async start(): Promise<void> {
    const self = { ...this.#self };
    try {
      await this.#register(self);
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

  async #register(self: NodeIdentity): Promise<void> {
    const staleMs = LIVE_HEARTBEATS * this.heartbeatMs;
    const result = await registerNode(this.db, self, staleMs, (holder) => hostProcessIsGone(holder.hostname, holder.pid));
    if (!result.registered) {
      const { holder, heartbeatAgeMs } = result;
      throw new CannotStart(
        `instance id "${self.instanceId}" is taken by a live node (${holder.hostname}, pid ${holder.pid}, heartbeat ${Math.max(0, Math.round(heartbeatAgeMs / 1000))} s ago): give each node its own cluster.instance_id, or stop the other one`,
        'instance_taken',
      );
    }
    this.#registered = true;
  }

  async #retryRegister(self: NodeIdentity): Promise<void> {
    try {
      await this.#register(self);
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
      const ours = await heartbeatNode(this.db, self);
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
    if (!this.#registered) return;
    this.#registered = false;
    await stopNode(this.db, { ...this.#self }).catch((err) => this.log.warn('marking this node stopped failed', { error: String(err) }));
  }
}
