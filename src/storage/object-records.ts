/**
 * The sidecar of an embedded-store object: its commit record. `objects/<bucket>/<h[0..2]>/<h>.json`
 * holds key, size, etag, type, mtime and the name of the content file `<h>.<random>.data` beside
 * it, where h = SHA-256 of (bucket, key). Publishing an object renames a new sidecar over the old one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Unavailable } from '../errors.ts';
import type { ObjectInfo } from './contract.ts';
import { tempName } from './temp-files.ts';

export interface Sidecar {
  v: 1;
  bucket: string;
  key: string;
  size: number;
  etag: string;
  mtime: number;
  /** File name of the content, in the same directory. */
  data: string;
  /** Content-Type given at PUT (absent in sidecars of earlier versions: application/octet-stream). */
  type?: string;
}

/** Whether `err` says the file (or a directory on its path) is not there. */
export function notThere(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export class ObjectRecords {
  constructor(
    private readonly root: string,
    private readonly bucket: string,
    /** Where sidecars are written before they are renamed into place. */
    private readonly tmpDir: string,
  ) {}

  locate(key: string): { dir: string; hash: string; sidecar: string } {
    const hash = createHash('sha256').update(this.bucket).update('\0').update(key).digest('hex');
    const dir = path.join(this.root, this.bucket, hash.slice(0, 2));
    return { dir, hash, sidecar: path.join(dir, `${hash}.json`) };
  }

  /** The sidecar of `key` and its directory, or null when there is no such object. */
  async read(key: string): Promise<{ meta: Sidecar; dir: string } | null> {
    const { dir, sidecar } = this.locate(key);
    // Most keys a rig asks about are new. A missing sidecar is found with one stat that does not
    // build an error (an ENOENT from readFile costs more than the rest of a reservation).
    if (!sidecarMayExist(sidecar)) return null;
    let text: string;
    try {
      text = await readFile(sidecar, 'utf8');
    } catch (err) {
      if (notThere(err)) return null;
      throw new Unavailable(`embedded storage: cannot read ${sidecar}: ${(err as Error).message}`);
    }
    let meta: Sidecar;
    try {
      meta = JSON.parse(text) as Sidecar;
    } catch {
      throw new Unavailable(`embedded storage: ${sidecar} is corrupt`);
    }
    // A different (bucket, key) with the same SHA-256 is not going to happen; refuse to mix them up anyway.
    if (meta.key !== key || meta.bucket !== this.bucket) return null;
    return { meta, dir };
  }

  /**
   * Makes the finished temp file `tmp` the content of `key`: renames it in, then atomically renames a
   * new sidecar over the old one, fsyncing the directory after each, and only then removes the old
   * content. Readers see the old object or the new one, never a mix.
   */
  async publish(key: string, tmp: string, content: { size: number; etag: string; type: string }, mtime: number): Promise<ObjectInfo> {
    const { size, etag, type } = content;
    const { dir, hash, sidecar } = this.locate(key);
    const rand = randomBytes(8).toString('hex');
    const dataName = `${hash}.${rand}.data`;
    const dataPath = path.join(dir, dataName);
    const sidecarTmp = path.join(this.tmpDir, tempName('json.part'));
    try {
      await mkdir(dir, { recursive: true });
      const old = await this.read(key).catch(() => null);
      await rename(tmp, dataPath);
      await fsyncDir(dir);
      const meta: Sidecar = { v: 1, bucket: this.bucket, key, size, etag, mtime, data: dataName, type };
      const sh = await open(sidecarTmp, 'wx', 0o640);
      try {
        await sh.writeFile(JSON.stringify(meta));
        await sh.sync();
      } finally {
        await sh.close();
      }
      await rename(sidecarTmp, sidecar);
      await fsyncDir(dir);
      if (old && old.meta.data !== dataName) await rm(path.join(dir, old.meta.data), { force: true });
      return { size, etag, lastModified: new Date(mtime), contentType: type };
    } catch (err) {
      await rm(sidecarTmp, { force: true }).catch(() => undefined);
      // Only remove our data file when the sidecar does not point at it (i.e. publishing did not happen).
      const now = await this.read(key).catch(() => null);
      if (!now || now.meta.data !== dataName) await rm(dataPath, { force: true }).catch(() => undefined);
      throw err;
    }
  }
}

/** False only when the path certainly does not exist (any other doubt is left to the read). */
function sidecarMayExist(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
