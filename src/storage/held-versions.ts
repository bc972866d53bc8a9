/**
 * Versions of embedded-store objects kept for a queued capture: `objects/.held/<bucket>/<h>.<etag>` is
 * a hard link to the content file of that version (h = the key's hash, as in object-records.ts). A
 * later PUT of the key unlinks only its own name of the old content, so the held one stays readable
 * until it is released. Content files are never changed in place, so the link is that version.
 */
import { createReadStream } from 'node:fs';
import { link, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Unavailable } from '../errors.ts';
import type { ObjectInfo } from './contract.ts';
import { notThere, type ObjectRecords } from './object-records.ts';

/** An etag as a file name part: hex only (the embedded store's etags are hex SHA-256). */
const HEX = /^[0-9a-f]{1,128}$/;

export class HeldVersions {
  readonly #dir: string;

  constructor(
    root: string,
    bucket: string,
    private readonly records: ObjectRecords,
  ) {
    this.#dir = path.join(root, '.held', bucket);
  }

  #file(key: string, etag: string): string | null {
    if (!HEX.test(etag)) return null;
    return path.join(this.#dir, `${this.records.locate(key).hash}.${etag}`);
  }

  /** Links the current content of `key` when its etag is `etag`; false when it is not (nothing held). Run under the key's lock. */
  async hold(key: string, etag: string): Promise<boolean> {
    const file = this.#file(key, etag);
    const found = await this.records.read(key);
    if (!file || !found || found.meta.etag !== etag) return false;
    try {
      await mkdir(this.#dir, { recursive: true });
      await link(path.join(found.dir, found.meta.data), file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return true;
      throw new Unavailable(`embedded storage: cannot keep a version of ${key}: ${(err as Error).message}`);
    }
    return true;
  }

  async release(key: string, etag: string): Promise<void> {
    const file = this.#file(key, etag);
    if (file) await rm(file, { force: true });
  }

  /** Size and time of the held version, or null when none is held. */
  async stat(key: string, etag: string): Promise<ObjectInfo | null> {
    const file = this.#file(key, etag);
    if (!file) return null;
    try {
      const st = await stat(file);
      return { size: st.size, etag, lastModified: st.mtime };
    } catch (err) {
      if (notThere(err)) return null;
      throw new Unavailable(`embedded storage: cannot read a kept version of ${key}: ${(err as Error).message}`);
    }
  }

  /** Hard-links the held version to `file`; false when none is held or the link fails (another file system). */
  async linkTo(key: string, etag: string, file: string): Promise<boolean> {
    const held = this.#file(key, etag);
    if (!held) return false;
    try {
      await link(held, file);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // The link is only a shortcut: a copy then meets the target disk's own fault (read-only, full) with its code.
      if (notThere(err) || code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK' || code === 'EROFS' || code === 'ENOSPC' || code === 'EDQUOT') return false;
      throw new Unavailable(`embedded storage: cannot link a kept version of ${key}: ${(err as Error).message}`);
    }
  }

  /** The held version's content, or null when none is held. */
  async open(key: string, etag: string): Promise<Readable | null> {
    if (!(await this.stat(key, etag))) return null;
    return createReadStream(this.#file(key, etag)!);
  }
}
