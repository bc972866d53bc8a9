/**
 * An S3-compatible peer for tests: s3rver on a free loopback port, storing into a fresh temp dir.
 * s3rver does not check signatures; tests that care recompute them (src/storage/sigv4.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface S3Peer {
  endpoint: string;
  port: number;
  /** Any non-empty pair works: s3rver accepts every signature. */
  accessKey: string;
  secretKey: string;
  close(): Promise<void>;
}

export async function startS3Peer(): Promise<S3Peer> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'rigd-s3peer-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const address = await server.run();
  let closed = false;
  return {
    endpoint: '127.0.0.1',
    port: address.port,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    async close() {
      if (closed) return;
      closed = true;
      server.httpServer?.closeAllConnections();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
