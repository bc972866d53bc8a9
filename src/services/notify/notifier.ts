/**
 * The entry point of notifications: the alerts service calls enqueue() inside the write transaction
 * of each incident transition, so the notify jobs commit (or roll back) with the transition.
 */
import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../db/index.ts';
import type { NotifyConfig } from '../../config/notify.ts';
import { enqueue } from '../../jobs/enqueue.ts';
import { attemptsFor, NOTIFY_JOB, payloadFor } from './job.ts';
import type { IncidentEvent } from './message.ts';
import { targetsFor } from './targets.ts';

export class Notifier {
  readonly #notify: Readonly<NotifyConfig>;
  readonly #maxAttempts: number;

  constructor(notify: Readonly<NotifyConfig>) {
    this.#notify = notify;
    this.#maxAttempts = attemptsFor(notify);
  }

  /** Queues one job per target that takes the incident's kind, in the caller's transaction; returns how many. */
  async enqueue(event: IncidentEvent, transaction: Transaction): Promise<number> {
    const targets = targetsFor(this.#notify, event.incident.kind);
    for (const t of targets) {
      // The delivery id: made once, sent with every attempt (the receiver's idempotency key).
      await enqueue(NOTIFY_JOB, payloadFor(t, event, randomUUID()), { transaction, maxAttempts: this.#maxAttempts, group: NOTIFY_JOB });
    }
    return targets.length;
  }
}
