/**
 * Judges upload reservations before any byte is sent, in the transaction that stores them: the key
 * must be the asking rig's (the first to reserve it owns it), the rig must be within its bounds
 * (open reservations, bytes per day), and the gateway must keep its free-space floor.
 */
import { statfs } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import type { Database, Transaction } from '../../db/index.ts';
import { claimKey, transferKey } from '../../db/object-owners.ts';
import { hasOpenReservation, openReservedBytes, uploaderUsage, type UploaderUsage } from '../../db/upload-bounds.ts';
import { Forbidden, InsufficientStorage, Throttled, type DomainError } from '../../errors.ts';
import type { IdentityEventDetails, IdentityEventKind } from '../rigs/identity-events.ts';

const DAY_MS = 86_400_000;
const MIB = 1024 * 1024;

/** One reservation as the gate sees it. */
export interface Asked {
  /** The rig bound to the asking address, or "@<address>" when none is. */
  uploader: string;
  /** The VPN address that asked (on record with a refusal). */
  peer: string;
  key: string;
  size: number;
  /** An object with this key exists now. */
  exists: boolean;
}

export interface Refusal {
  error: DomainError;
  event: { kind: IdentityEventKind; details: IdentityEventDetails };
}

/** The uploader a reservation from `peer` counts against. */
export function uploaderOf(rigId: string | null, peer: string): string {
  return rigId ?? `@${peer}`;
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export class ReservationGate {
  readonly #db: Database;
  readonly #bounds: Config['uploads'];
  readonly #floorBytes: number;
  readonly #dataDir: string;
  readonly #local: boolean;

  constructor(db: Database, config: Readonly<Config>) {
    this.#db = db;
    this.#bounds = config.uploads;
    this.#floorBytes = (config.server.min_free_mb + config.uploads.database_reserve_mb) * MIB;
    this.#dataDir = path.resolve(config.data_dir);
    // The embedded store keeps objects in data_dir: reserved bytes count against its disk.
    this.#local = config.storage.driver === 'embedded';
  }

  /** Free bytes on data_dir's file system (statfs; what the process may use). */
  async freeBytes(): Promise<number> {
    const st = await statfs(this.#dataDir);
    return Number(st.bavail) * Number(st.bsize);
  }

  /** Whether `bytes` more still leave data_dir's file system above the floor (the embedded store's PUT asks before reading a byte). */
  async roomFor(bytes: number): Promise<{ ok: boolean; floorMiB: number }> {
    return { ok: (await this.freeBytes()) - bytes >= this.#floorBytes, floorMiB: this.#floorBytes / MIB };
  }

  /** A refusal for each reservation, or null for those that may be stored; earlier ones count against later ones. */
  async judge(items: Asked[], t: Transaction, now = new Date()): Promise<(Refusal | null)[]> {
    const free = await this.freeBytes();
    let pending = this.#local ? await openReservedBytes(this.#db, now, t) : 0;
    const usage = new Map<string, UploaderUsage>();
    const out: (Refusal | null)[] = [];
    for (const item of items) {
      let u = usage.get(item.uploader);
      if (!u) {
        u = await uploaderUsage(this.#db, item.uploader, now, new Date(now.getTime() - DAY_MS), t);
        usage.set(item.uploader, u);
      }
      const refusal = this.#bounded(item, u, free - (this.#local ? pending : 0), now) ?? (await this.#owned(item, now, t));
      out.push(refusal);
      if (refusal) continue;
      u.open++;
      u.bytesSince += item.size;
      u.bytesOldest ??= now;
      u.openEarliestExpiry ??= now;
      pending += item.size;
    }
    return out;
  }

  #bounded(item: Asked, u: UploaderUsage, free: number, now: Date): Refusal | null {
    const rig = item.uploader;
    const quota = (bound: string, error: DomainError): Refusal => ({ error, event: { kind: 'quota_refused', details: { rig, bound } } });
    const after = this.#local ? free - item.size : free;
    if (after < this.#floorBytes) {
      const message = `not enough free space on the gateway for ${item.size} bytes: it keeps ${this.#floorBytes / MIB} MiB free (server.min_free_mb + uploads.database_reserve_mb); retry later`;
      return quota('free_space', new InsufficientStorage(message));
    }
    if (u.open >= this.#bounds.open_per_rig) {
      const wait = (u.openEarliestExpiry?.getTime() ?? now.getTime()) - now.getTime();
      return quota('open_per_rig', new Throttled(`this rig has ${u.open} open upload reservations (uploads.open_per_rig); upload or let them expire first`, seconds(wait), 'too_many_reservations'));
    }
    if (u.bytesSince + item.size > this.#bounds.bytes_per_rig_per_day) {
      const wait = (u.bytesOldest?.getTime() ?? now.getTime()) + DAY_MS - now.getTime();
      return quota(
        'bytes_per_rig_per_day',
        new Throttled(`this rig reserved ${u.bytesSince} bytes within 24 hours; ${item.size} more would pass uploads.bytes_per_rig_per_day (${this.#bounds.bytes_per_rig_per_day})`, seconds(wait), 'too_many_bytes'),
      );
    }
    return null;
  }

  /** The key's owner: the first uploader to reserve it; an unused claim (no object, no open reservation) passes on. */
  async #owned(item: Asked, now: Date, t: Transaction): Promise<Refusal | null> {
    const owner = await claimKey(this.#db, item.key, item.uploader, t, now);
    if (owner === item.uploader) return null;
    if (!item.exists && !(await hasOpenReservation(this.#db, owner, item.key, now, t))) {
      await transferKey(this.#db, item.key, owner, item.uploader, t, now);
      return null;
    }
    return {
      error: new Forbidden(`key ${item.key} belongs to another rig: choose another key`, 'key_owned'),
      event: { kind: 'key_refused', details: { rig: item.uploader, owner, key: item.key, address: item.peer } },
    };
  }
}
