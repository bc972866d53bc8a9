import { Readable } from 'node:stream';
import { S3Error } from './s3-error.ts';

/** Bytes to store: a stream (an HTTP request, a file) or any async iterable of byte chunks. */
export type ByteSource = Readable | AsyncIterable<unknown>;

/**
 * Called with each chunk in order. Returns undefined when done with it, or a promise while the
 * chunk is still being taken in (reading pauses until it settles). Throwing stops the reading.
 */
export type ChunkSink = (chunk: Buffer) => Promise<void> | undefined;

export function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  throw new TypeError('upload stream must yield bytes');
}

const cut = (detail: string) => new S3Error('IncompleteBody', `The upload ended before all bytes arrived: ${detail}`);

/**
 * Reads every chunk of `source` into `sink`, with backpressure. A stream is read with 'data'
 * events (no re-buffering, no copies); when reading stops early, the stream is destroyed, or only
 * paused when `leaveOpenOnError` (its owner still has to answer on it). A source that fails or
 * closes before its end rejects with S3Error IncompleteBody; an abort of `signal`, with its reason.
 */
export function consumeBytes(source: ByteSource, leaveOpenOnError: boolean, sink: ChunkSink, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return source instanceof Readable ? consumeStream(source, leaveOpenOnError, sink, signal) : consumeIterable(source, sink, signal);
}

function consumeStream(source: Readable, leaveOpenOnError: boolean, sink: ChunkSink, signal?: AbortSignal): Promise<void> {
  if (source.readableEnded) return Promise.resolve();
  // Closed before it was read (the client went away while the request was being checked): its
  // 'close' has been emitted already, and no listener added now would ever hear of it.
  if (source.destroyed) return Promise.reject(cut('the connection closed'));
  return new Promise((resolve, reject) => {
    let taking: Promise<void> | undefined;
    let ended = false;
    let stopped = false;
    const detach = () => {
      source.removeListener('data', onData);
      source.removeListener('end', onEnd);
      source.removeListener('error', onError);
      source.removeListener('close', onClose);
      signal?.removeEventListener('abort', onAbort);
    };
    const stop = (err: unknown) => {
      if (stopped) return;
      stopped = true;
      detach();
      if (leaveOpenOnError) source.pause();
      else source.destroy();
      reject(err);
    };
    const finish = () => {
      if (stopped) return;
      stopped = true;
      detach();
      resolve();
    };
    const onData = (chunk: unknown) => {
      if (stopped) return;
      try {
        taking = sink(toBuffer(chunk));
      } catch (err) {
        return stop(err);
      }
      if (!taking) return;
      source.pause();
      taking.then(
        () => {
          taking = undefined;
          if (stopped) return;
          if (ended) finish();
          else source.resume();
        },
        (err: unknown) => stop(err),
      );
    };
    const onEnd = () => {
      ended = true;
      if (!taking) finish();
    };
    const onError = (err: Error) => stop(cut(err.message));
    const onClose = () => {
      if (!ended) stop(cut('the connection closed'));
    };
    const onAbort = () => stop(signal?.reason);
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    source.once('close', onClose);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function consumeIterable(source: AsyncIterable<unknown>, sink: ChunkSink, signal?: AbortSignal): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  for (;;) {
    if (signal?.aborted) {
      await iterator.return?.();
      throw signal.reason;
    }
    let step: IteratorResult<unknown>;
    try {
      step = await iterator.next();
    } catch (err) {
      throw cut((err as Error).message);
    }
    if (step.done) return;
    try {
      await sink(toBuffer(step.value));
    } catch (err) {
      await iterator.return?.();
      throw err;
    }
  }
}
