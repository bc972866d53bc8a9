/** Helpers for storage tests: temp data dirs, configs, and network peers that misbehave. */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { configSchema, type Config } from '../../src/config/schema.ts';

/** A fresh directory under os.tmpdir(); removed by the returned cleanup. */
export function tempDir(prefix = 'rigd-storage-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

/** A validated Config with defaults, merged with `overrides` (one level deep per section, minio nested). */
export function testConfig(overrides: DeepPartial<Config> = {}): Config {
  const raw = {
    ...overrides,
    storage: { ...overrides.storage, minio: { ...overrides.storage?.minio } },
  };
  const { value, error } = configSchema.validate(raw, { convert: true });
  if (error) throw error;
  return value as Config;
}

/** A loopback port on which nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** A peer that accepts connections and never answers. */
export async function hungPeer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
      }),
  };
}
