import { openClusterLock, type ClusterLock } from '../../db/cluster-lock.ts';
import type { Database } from '../../db/index.ts';
import type { Logger } from '../../log.ts';
import type { BackgroundTask } from '../background-task.ts';
import { RUN_ID } from './run-id.ts';

/**
 * Background tasks that run on one node at a time (the upload monitor, the retention sweep): the
 * node holding the cluster lock (src/db/cluster-lock.ts) runs them. Every `everyMs` each node tries
 * the lock; the holder starts the tasks, a node that lost it (its connection dropped) stops them.
 * When the holder dies, the database frees the lock and another node takes the duties at its next
 * try. On SQLite the lock is always held: the tasks just run.
 */
export class ClusterDuties implements BackgroundTask {
  #lock: ClusterLock | undefined;
  #timer: NodeJS.Timeout | undefined;
  #trying: Promise<void> | undefined;
  #running = false;
  #stopped = false;

  constructor(
    private readonly db: Database,
    private readonly tasks: BackgroundTask[],
    private readonly everyMs: number,
    private readonly log: Logger,
  ) {}

  /** This node runs the duties now. */
  get holding(): boolean {
    return this.#running;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    // A holder silent for three tries (frozen, or its event loop stuck) loses the lock to another node.
    // The lock's session carries this run's id: rigd doctor names the node holding it (src/db/nodes.ts).
    this.#lock = await openClusterLock(this.db, { idleLimitMs: Math.max(3 * this.everyMs, 2000), holder: RUN_ID });
    await this.#try();
    this.#timer = setInterval(() => void this.#try(), this.everyMs);
    this.#timer.unref();
  }

  #try(): Promise<void> {
    this.#trying ??= this.#attempt().finally(() => (this.#trying = undefined));
    return this.#trying;
  }

  async #attempt(): Promise<void> {
    if (this.#stopped || !this.#lock) return;
    let held = false;
    try {
      held = await this.#lock.tryHold();
    } catch (err) {
      this.log.warn('cluster duties: the lock could not be tried', { error: String(err) });
    }
    if (this.#stopped) return;
    if (held && !this.#running) {
      this.#running = true;
      this.log.info('this node runs the cluster duties (upload expiry, retention)');
      for (const task of this.tasks) await task.start();
    } else if (!held && this.#running) {
      this.#running = false;
      this.log.warn('this node lost the cluster duties lock; another node takes them');
      await this.#stopTasks();
    }
  }

  async #stopTasks(): Promise<void> {
    for (const task of [...this.tasks].reverse()) await task.stop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#trying;
    if (this.#running) {
      this.#running = false;
      await this.#stopTasks();
    }
    await this.#lock?.release();
  }
}
