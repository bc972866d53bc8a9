/**
 * The checks of /healthz beyond "the database answers a read": can the service still write?
 * - disk_space: free space in data_dir's file system is at least server.min_free_mb;
 * - database_write: the last write committed (after a failed one, a probe write shows whether the
 *   database takes writes again, so health recovers without waiting for traffic);
 * - data_files: every file directly in data_dir is writable by this process;
 * - disk_write: a few bytes written and synced in data_dir (read-only remount, failing disk).
 * - connections (PostgreSQL): each connection rigd holds beside its pool (`listen`, `capture_store`)
 *   is up; a broken one reconnects by itself and shows here until it has.
 * statfs and the directory scan are cached briefly: /healthz may be polled often, and rig reports
 * never wait on them.
 */
import { statfs } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import { connectionStatus } from '../../db/connection-status.ts';
import type { Database } from '../../db/index.ts';
import { describeUnwritable, unwritableDataFiles, type Identity } from '../data-files.ts';
import { CaptureRowsHealth } from './capture-rows.ts';
import { probeDataDirWrite } from './files.ts';

/** 'ok', or what is wrong. */
export type CheckResult = string;

/** How long a free-space or data-file result is reused. */
const CACHE_MS = 1000;
/** Fewest milliseconds between two probe writes while writes fail. */
const PROBE_EVERY_MS = 1000;

function cached(compute: () => Promise<CheckResult>): () => Promise<CheckResult> {
  let last: { at: number; value: Promise<CheckResult> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= CACHE_MS) last = { at: now, value: compute() };
    return last.value;
  };
}

function processIdentity(): Identity {
  if (typeof process.getuid !== 'function') return { uid: 0, gid: 0 };
  return { uid: process.getuid(), gid: process.getgid!(), groups: process.getgroups?.() ?? [] };
}

export class HealthChecks {
  readonly #db: Database;
  readonly #dataDir: string;
  readonly #minFreeBytes: number;
  #lastProbe = 0;
  /** Ingested captures whose rows are missing from the capture store (capture-rows.ts). */
  readonly captureRows: CaptureRowsHealth;

  constructor(db: Database, config: Readonly<Config>) {
    this.captureRows = new CaptureRowsHealth(db, config);
    this.#db = db;
    this.#dataDir = path.resolve(config.data_dir);
    this.#minFreeBytes = config.server.min_free_mb * 1024 * 1024;
  }

  /** Free space in data_dir's file system against server.min_free_mb. */
  readonly diskSpace = cached(async () => {
    try {
      const st = await statfs(this.#dataDir);
      const free = Number(st.bavail) * Number(st.bsize);
      if (free >= this.#minFreeBytes) return 'ok';
      const mib = (free / 1024 / 1024).toFixed(1);
      return `only ${mib} MiB free in ${this.#dataDir} (server.min_free_mb is ${this.#minFreeBytes / 1024 / 1024}): writes fail when it runs out`;
    } catch (err) {
      return `cannot read free space of ${this.#dataDir}: ${(err as Error).message}`;
    }
  });

  /** Files in data_dir this process cannot write, by name and owner. */
  readonly dataFiles = cached(async () => {
    const bad = unwritableDataFiles(this.#dataDir, processIdentity());
    return bad.length === 0 ? 'ok' : `rigd cannot write ${describeUnwritable(bad)}`;
  });

  /** A write and sync in data_dir (files.ts): a read-only remount or a failing disk shows at the next poll. */
  readonly diskWrite = cached(() => probeDataDirWrite(this.#dataDir));
  /** The connections held beside the pool (PostgreSQL: listen, capture_store), by check name: 'ok' or what is wrong. */
  connections(): Record<string, CheckResult> {
    return connectionStatus();
  }

  /** Whether the database takes writes: the last write's outcome, re-probed while it is a failure. */
  async databaseWrite(): Promise<CheckResult> {
    const writes = this.#db.writes;
    if (writes.health.failing === null) return 'ok';
    if (Date.now() - this.#lastProbe >= PROBE_EVERY_MS && writes.pending === 0) {
      this.#lastProbe = Date.now();
      await this.#probe().catch(() => undefined);
      if (writes.health.failing === null) return 'ok';
    }
    const f = writes.health.failing;
    return f ? `writes fail (${f.code}): ${f.message}` : 'ok';
  }

  /** One real write that changes nothing. */
  #probe(): Promise<void> {
    return this.#db.probeWrite();
  }
}
