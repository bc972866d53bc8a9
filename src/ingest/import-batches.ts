/**
 * The batches the capture child streams, as an AsyncIterable for the store writer, with back-pressure:
 * the child sends its next batch only after this iterable has been asked for it (the 'ack'), so one
 * batch at most is in flight between the child and the store.
 */
import type { RowBatch } from '../db/capture-store/writer.ts';

export class BatchChannel implements AsyncIterable<RowBatch> {
  #next: RowBatch | undefined;
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;

  /** @param ack asks the child for its next message. */
  constructor(private readonly ack: () => void) {}

  push(batch: RowBatch): void {
    this.#next = batch;
    this.#poke();
  }

  end(): void {
    this.#ended = true;
    this.#poke();
  }

  fail(err: Error): void {
    this.#error ??= err;
    this.#poke();
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<RowBatch> {
    for (;;) {
      this.ack(); // the child waits for this before its next batch (the first: after its list of tables)
      while (!this.#next && !this.#ended && !this.#error) await new Promise<void>((resolve) => (this.#wake = resolve));
      if (this.#error) throw this.#error;
      const batch = this.#next;
      this.#next = undefined;
      if (!batch) return;
      yield batch;
    }
  }
}
