/**
 * The bytes of one batch of rows as the capture child hands them to rigd (through the spool file,
 * batch-spool.ts): each value in row order as a tag byte and its payload, no per-batch framing (the
 * 'batch' message on IPC carries the table, the row count and the frame's length).
 *
 *   null   0
 *   number 1, float64 LE
 *   text   2, uint32 LE byte length, UTF-8
 *   blob   3, uint32 LE byte length, bytes
 *
 * The child encodes into one buffer it reuses (FrameWriter); rigd decodes from one buffer it reuses
 * (decodeFrame), text into strings and blobs into views of that buffer, so a batch allocates no
 * backing store of its own on rigd's side. rigd checks every length against the frame: a frame that
 * does not decode to exactly the announced rows is an error.
 */

const NULL = 0;
const NUMBER = 1;
const TEXT = 2;
const BLOB = 3;

/** Encodes rows into a buffer that grows as needed and is reused from one batch to the next. */
export class FrameWriter {
  #buf: Buffer;
  #at = 0;

  constructor(initialBytes = 1 << 20) {
    this.#buf = Buffer.allocUnsafe(initialBytes);
  }

  #room(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#at + n));
    this.#buf.copy(next, 0, 0, this.#at);
    this.#buf = next;
  }

  /** The encoded rows (a view of the reused buffer, valid until the next call). */
  encode(rows: readonly (readonly unknown[])[]): Buffer {
    this.#at = 0;
    for (const row of rows) for (const v of row) this.#value(v);
    return this.#buf.subarray(0, this.#at);
  }

  /**
   * As encode, for rows as the capture reader gives them (db/capture-file/pages.ts): one object per
   * row, its values under `fields` in order and its class string under the last field, of which the
   * first `classWidth` letters are sent (what follows them is the reader's, not rigd's).
   */
  encodeRecords(records: readonly Record<string, unknown>[], fields: readonly string[], classWidth: number): Buffer {
    this.#at = 0;
    const values = fields.length - 1;
    const cls = fields[values]!;
    for (const r of records) {
      for (let i = 0; i < values; i++) this.#value(r[fields[i]!]);
      this.#classes(r[cls], classWidth);
    }
    return this.#buf.subarray(0, this.#at);
  }

  /** The first `width` letters of a class string (ASCII: one byte each) as a text value. */
  #classes(v: unknown, width: number): void {
    if (typeof v !== 'string' || v.length < width) throw new Error('a row without its classes cannot be sent');
    this.#room(5 + width);
    this.#buf[this.#at] = TEXT;
    this.#buf.writeUInt32LE(width, this.#at + 1);
    this.#buf.write(v, this.#at + 5, width, 'latin1');
    this.#at += 5 + width;
  }

  #value(v: unknown): void {
    if (v === null || v === undefined) {
      this.#room(1);
      this.#buf[this.#at++] = NULL;
    } else if (typeof v === 'number') {
      this.#room(9);
      this.#buf[this.#at] = NUMBER;
      this.#buf.writeDoubleLE(v, this.#at + 1);
      this.#at += 9;
    } else if (typeof v === 'string') {
      // At most 3 bytes of UTF-8 per UTF-16 unit.
      this.#room(5 + v.length * 3);
      const n = this.#buf.write(v, this.#at + 5, 'utf8');
      this.#buf[this.#at] = TEXT;
      this.#buf.writeUInt32LE(n, this.#at + 1);
      this.#at += 5 + n;
    } else if (v instanceof Uint8Array) {
      this.#room(5 + v.byteLength);
      this.#buf[this.#at] = BLOB;
      this.#buf.writeUInt32LE(v.byteLength, this.#at + 1);
      this.#buf.set(v, this.#at + 5);
      this.#at += 5 + v.byteLength;
    } else if (typeof v === 'bigint') {
      this.#value(v.toString());
    } else {
      throw new Error(`a value of type ${typeof v} cannot be sent`);
    }
  }
}

/**
 * Decodes `count` rows of `width` values from `frame`. Blobs are views of `frame`: they are valid only
 * until its buffer is reused (the next batch).
 */
export function decodeFrame(frame: Buffer, count: number, width: number): unknown[][] {
  const end = frame.length;
  let at = 0;
  const bad = (what: string): Error => new Error(`capture child sent a malformed batch (${what} at byte ${at})`);
  // Every value takes a byte at least.
  if (!Number.isSafeInteger(count) || count < 1 || count * width > end) throw bad(`${count} rows of ${width} values in ${end} bytes`);
  const rows: unknown[][] = new Array(count);
  for (let r = 0; r < count; r++) {
    const row: unknown[] = new Array(width);
    for (let c = 0; c < width; c++) {
      if (at >= end) throw bad('truncated');
      const tag = frame[at]!;
      if (tag === NULL) {
        row[c] = null;
        at += 1;
      } else if (tag === NUMBER) {
        if (at + 9 > end) throw bad('truncated number');
        row[c] = frame.readDoubleLE(at + 1);
        at += 9;
      } else if (tag === TEXT || tag === BLOB) {
        if (at + 5 > end) throw bad('truncated length');
        const n = frame.readUInt32LE(at + 1);
        const start = at + 5;
        if (start + n > end) throw bad('value past the end');
        row[c] = tag === TEXT ? frame.toString('utf8', start, start + n) : frame.subarray(start, start + n);
        at = start + n;
      } else {
        throw bad(`unknown tag ${tag}`);
      }
    }
    rows[r] = row;
  }
  if (at !== end) throw bad('trailing bytes');
  return rows;
}
