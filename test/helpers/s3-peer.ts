/**
 * An S3-compatible peer for tests: s3rver on a free loopback port, storing into a fresh temp dir.
 * s3rver does not check signatures; tests that care recompute them (src/storage/sigv4.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
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

/** Longest wait for s3rver to listen; it binds a loopback port and nothing else. */
const START_TIMEOUT_MS = 60_000;

/**
 * Starts the peer, or rejects with one line saying that s3rver did not start and why (a test that
 * needs it then fails on that line: it never passes without its peer).
 */
export async function startS3Peer(at: { address?: string; port?: number } = {}): Promise<S3Peer> {
  const host = at.address ?? '127.0.0.1';
  const directory = mkdtempSync(path.join(os.tmpdir(), 'rigd-s3peer-'));
  const server = new S3rver({ address: host, port: at.port ?? 0, silent: true, directory });
  // s3rver's own listen() leaves the server's 'error' event unhandled (EADDRNOTAVAIL, EACCES crash
  // the process): listen with a callback, which hands back the server, and reject on its error.
  const peer = server as unknown as { listen(...args: unknown[]): Server | Promise<Server> };
  const listen = peer.listen.bind(peer) as (...args: unknown[]) => Server;
  peer.listen = (...args: unknown[]) =>
    new Promise<Server>((resolve, reject) => {
      const http = listen(...args, () => resolve(http));
      http.once('error', reject);
    });
  let timer: NodeJS.Timeout | undefined;
  let address: { port: number };
  try {
    address = await Promise.race([
      server.run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer after ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    await server.close().catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
    throw new Error(`the S3 peer (s3rver on ${host}) could not start: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
  let closed = false;
  return {
    endpoint: host,
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
