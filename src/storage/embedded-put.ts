/** The body of an embedded PUT: streamed into a temp file, exactly the reserved size, fsynced. */
import { mkdir } from 'node:fs/promises';
import { Unavailable } from '../errors.ts';
import { consumeBytes, type ByteSource } from './byte-source.ts';
import { ObjectFileWriter, type WrittenFile } from './object-file-writer.ts';
import { S3Error } from './s3-error.ts';

export interface PutOptions {
  /** The exact number of bytes the upload must have (the reserved size). */
  expectedSize: number;
  /** Called as bytes are written, with the total so far. */
  onProgress?: (bytesSoFar: number) => void;
  /**
   * On a refusal, leave a stream source paused but open (its owner still answers on it, e.g. an
   * HTTP request whose client must read the error). By default the source is destroyed.
   */
  leaveSourceOnError?: boolean;
  /** Aborting it stops the PUT at once (nothing stored); the PUT rejects with its reason. */
  signal?: AbortSignal;
  /** The Content-Type the client sent, returned on GET (default application/octet-stream). */
  contentType?: string;
}

/**
 * Writes the bytes of `source` to the temp file `tmp` (in tmpDir, created if needed), stopping as soon
 * as more than opts.expectedSize bytes arrived (S3Error EntityTooLarge) and refusing a short body
 * (S3Error IncompleteBody). On any failure the writer is aborted; the caller removes `tmp`.
 */
export async function writeTempObject(tmpDir: string, tmp: string, source: ByteSource, opts: PutOptions): Promise<WrittenFile> {
  const { expectedSize, onProgress } = opts;
  let file: ObjectFileWriter;
  try {
    await mkdir(tmpDir, { recursive: true });
    file = await ObjectFileWriter.create(tmp);
  } catch (err) {
    throw new Unavailable(`embedded storage: cannot create a temp file: ${(err as Error).message}`);
  }
  try {
    let received = 0;
    await consumeBytes(source, opts.leaveSourceOnError === true, (chunk) => {
      received += chunk.length;
      if (received > expectedSize) throw new S3Error('EntityTooLarge', `The upload is longer than the reserved ${expectedSize} bytes`);
      const taken = file.write(chunk);
      onProgress?.(received);
      return taken;
    }, opts.signal);
    if (received !== expectedSize) {
      throw new S3Error('IncompleteBody', `The upload has ${received} bytes, not the reserved ${expectedSize}`);
    }
    let written: WrittenFile;
    try {
      written = await file.finish();
    } catch (err) {
      throw new Unavailable(`embedded storage: cannot write: ${(err as Error).message}`);
    }
    if (written.size !== received) throw new Unavailable(`embedded storage: ${written.size} of ${received} bytes were written`);
    return written;
  } catch (err) {
    await file.abort();
    throw err;
  }
}
