import type { Config } from '../../config/schema.ts';
import { dataVersion, type Reader } from '../../db/reader.ts';
import { weakEtag } from '../weak-etag.ts';
import { listRigs } from './queries.ts';
import type { RigView } from './view.ts';
import { MIN_INTERVALS, statusEdges } from './status.ts';

/** A listing body built once and served until the data or the time it depends on moves on. */
export interface CachedBody {
  body: string;
  /** The body as UTF-8, encoded once (a 10,000-rig listing is ~5 MB). */
  bytes: Buffer;
  /** Weak validator over the exact bytes: W/" + 32 hex digits of the body's SHA-256 + ". */
  etag: string;
}

/** Longest a listing is served without being rebuilt: what depends on "now" (relative times, the online_since window). */
export const LIST_MAX_AGE_MS = 1000;

interface Generation {
  /** The database's data version (db/reader.ts dataVersion): moves when any connection (or process) commits. */
  version: string;
  builtAt: number;
  /** The first moment a rig's status changes by time alone (it crosses its stale or offline edge: status.ts). */
  validUntil: number;
  rigs: RigView[];
  bodies: Map<string, Promise<CachedBody>>;
}

/**
 * The read model of the rig list in the server process: the list (status computed at build time)
 * and the bodies built from it (the /rigs page, GET /api/v1/rigs per status filter) with their ETags,
 * computed once per generation and served from memory. A generation ends when anything is committed
 * to the database (dataVersion: SQLite's data_version, PostgreSQL's snapshot; a report batch, the
 * retention sweep, a project assignment, another process), when "now" crosses a status boundary of
 * any rig, or after LIST_MAX_AGE_MS. Nothing is stored: every body is derived from the database.
 */
export class RigListCache {
  readonly #reader: Reader;
  readonly #config: Pick<Config, 'rigs' | 'vpn' | 'alerts'>;
  readonly #now: () => Date;
  readonly #maxAgeMs: number;
  #ready: Generation | null = null;
  #building: { version: string; generation: Promise<Generation> } | null = null;

  constructor(reader: Reader, config: Pick<Config, 'rigs' | 'vpn' | 'alerts'>, opts: { now: () => Date; maxAgeMs?: number }) {
    this.#reader = reader;
    this.#config = config;
    this.#now = opts.now;
    this.#maxAgeMs = opts.maxAgeMs ?? LIST_MAX_AGE_MS;
  }

  /** The body `name` of the current generation, built by `build` once per generation. */
  async body(name: string, build: (rigs: RigView[], at: Date) => Promise<string> | string): Promise<CachedBody> {
    const g = await this.#generation();
    let body = g.bodies.get(name);
    if (!body) {
      body = Promise.resolve(build(g.rigs, new Date(g.builtAt))).then((text) => {
        const bytes = Buffer.from(text, 'utf8');
        return { body: text, bytes, etag: weakEtag(bytes) };
      });
      // A failed build is not kept: the next request tries again.
      body.catch(() => g.bodies.delete(name));
      g.bodies.set(name, body);
    }
    return body;
  }

  async #generation(): Promise<Generation> {
    const version = await dataVersion(this.#reader);
    const now = this.#now().getTime();
    const ready = this.#ready;
    if (ready && ready.version === version && now >= ready.builtAt && now < ready.validUntil) return ready;
    // Requests arriving while this version is built wait for that build rather than starting another.
    if (this.#building?.version === version) return this.#building.generation;
    const building = { version, generation: this.#build(version, now) };
    this.#building = building;
    try {
      const g = await building.generation;
      if (!this.#ready || this.#ready.builtAt <= g.builtAt) this.#ready = g;
      return g;
    } finally {
      if (this.#building === building) this.#building = null;
    }
  }

  async #build(version: string, now: number): Promise<Generation> {
    const rigs = await listRigs(this.#reader, this.#config, new Date(now));
    // A status is computed as age <= threshold: it changes at the first millisecond past seen + threshold.
    let validUntil = now + this.#maxAgeMs;
    for (const r of rigs) {
      const seen = r.last_seen_at.getTime();
      const e = statusEdges({ interval_s: r.report_interval_s ?? null, intervals: MIN_INTERVALS }, this.#config);
      for (const edge of [seen + e.stale_after_s * 1000 + 1, seen + e.offline_after_s * 1000 + 1]) if (edge > now && edge < validUntil) validUntil = edge;
    }
    return { version, builtAt: now, validUntil, rigs, bodies: new Map() };
  }
}
