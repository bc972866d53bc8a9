/**
 * Rows into the PostgreSQL store with COPY ... FROM STDIN (pg-copy-streams), in the import's
 * transaction: one COPY per run of batches of one table, each batch one chunk of COPY's text format.
 *
 *   const copy = new PgCopy(client, captureId);
 *   await copy.write(target, rows, classes);   // opens the table's COPY when the table changes
 *   await copy.end();                          // ends the COPY in progress; throws what the server refused
 *   await copy.abort(err);                     // on failure: CopyFail, the server aborts the statement
 *
 * Each value is its class-carrying jsonb text (pg-values.ts), escaped for the text format: backslash,
 * newline, carriage return and tab as \\, \n, \r, \t; SQL NULL as \N. (A text holding NUL travels as
 * base64 inside the jsonb, so no NUL byte is ever sent.) Memory stays bounded: a batch is written in
 * pieces of about 64 Ki characters, then the write waits for the socket to drain (backpressure), so
 * one batch at a time is in flight.
 */
import { once } from 'node:events';
import type pg from 'pg';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { encodeValue, realText } from './pg-values.ts';

/** Where one capture table's rows go: its store table and the store columns of its columns, in order. */
export interface CopyTarget {
  /** The capture's table name (for messages). */
  name: string;
  /** The store table, schema-qualified and quoted. */
  qualified: string;
  storeColumns: readonly string[];
}

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const INTEGER = /^-?\d+$/;

/** Text for COPY's text format: backslash, newline, carriage return and tab escaped. */
function escaped(text: string): string {
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPES[c]!) : text;
}

/**
 * A value's field in COPY's text format: its jsonb text (encodeValue's, to the byte), escaped; NULL
 * as \N. The common cases are written here directly (one call per value, no regular expression).
 */
export function copyField(v: unknown, cls?: string): string {
  if (v === null || v === undefined || cls === 'n') return '\\N';
  if (typeof v === 'number') return cls === 'r' || (cls === undefined && !Number.isInteger(v)) ? realText(v) : String(v);
  if (typeof v === 'string') {
    if (cls === 'i' && INTEGER.test(v)) return v;
    if (cls === 'r' || v.includes('\u0000')) return escaped(encodeValue(v, cls)!);
    // JSON.stringify escapes every control character, so its only character COPY needs escaped is the backslash.
    const json = JSON.stringify(v);
    return json.includes('\\') ? json.replaceAll('\\', '\\\\') : json;
  }
  // A blob's jsonb text directly (base64 needs no escaping in JSON nor in COPY): encodeValue's form.
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `{"base64":"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}"}`;
  const text = encodeValue(v, cls);
  return text === null ? '\\N' : escaped(text);
}

/** Characters of COPY text per piece handed to the stream, about (small strings: V8's young generation frees them soon). */
const PIECE_CHARS = 64 * 1024;

/** Rows (each `width` values, classes per row) as COPY text-format lines, capture id first. */
export function copyLines(captureId: number, rows: readonly unknown[][], width: number, classes: readonly string[] | undefined, table: string): string {
  return copyPieces(captureId, rows, width, classes, table).join('');
}

/** The same text as copyLines in pieces of about PIECE_CHARS characters (whole lines; a longer line alone). */
export function copyPieces(captureId: number, rows: readonly unknown[][], width: number, classes: readonly string[] | undefined, table: string): string[] {
  const pieces: string[] = [];
  let lines: string[] = [];
  let chars = 0;
  const id = String(captureId);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    if (!Array.isArray(row) || row.length !== width) {
      throw new Error(`a row of ${table} has ${Array.isArray(row) ? row.length : 'no'} values, not ${width}`);
    }
    const cls = classes?.[r];
    let line = id;
    for (let i = 0; i < width; i++) line += `\t${copyField(row[i], cls?.[i])}`;
    lines.push(line);
    chars += line.length + 1;
    if (chars >= PIECE_CHARS) {
      pieces.push(`${lines.join('\n')}\n`);
      lines = [];
      chars = 0;
    }
  }
  if (lines.length > 0) pieces.push(`${lines.join('\n')}\n`);
  return pieces;
}

export class PgCopy {
  #stream: CopyStreamQuery | undefined;
  #target: CopyTarget | undefined;
  /** Settles when the COPY in progress ends (the server's answer). */
  #done: Promise<void> | undefined;
  #sent = 0;

  constructor(
    private readonly client: pg.Client,
    private readonly captureId: number,
  ) {}

  /** Sends `rows` of `target` (ending the COPY of another table first). */
  async write(target: CopyTarget, rows: readonly unknown[][], classes?: readonly string[]): Promise<void> {
    if (this.#target !== target) {
      await this.end();
      this.#open(target);
    }
    const pieces = copyPieces(this.captureId, rows, target.storeColumns.length, classes, target.name);
    this.#sent += rows.length;
    const stream = this.#stream!;
    let full = false;
    for (const piece of pieces) full = !stream.write(piece) || full;
    if (full) await this.#drained();
  }

  /** Ends the COPY in progress; rejects with the server's refusal, naming the table. */
  async end(): Promise<void> {
    const stream = this.#stream;
    const target = this.#target;
    if (!stream || !target) return;
    this.#stream = undefined;
    this.#target = undefined;
    stream.end();
    await this.#done;
    if (stream.rowCount !== this.#sent) throw new Error(`capture store table ${target.name}: COPY stored ${stream.rowCount} rows of ${this.#sent}`);
  }

  /** Stops the COPY in progress (CopyFail); the transaction is then to be rolled back. */
  async abort(reason: Error): Promise<void> {
    const stream = this.#stream;
    this.#stream = undefined;
    this.#target = undefined;
    if (!stream) return;
    if (!stream.destroyed) stream.destroy(reason);
    await this.#done?.catch(() => undefined);
  }

  #open(target: CopyTarget): void {
    const cols = [CAPTURE_ID_COLUMN, ...target.storeColumns].map(quoteIdent).join(', ');
    const stream = this.client.query(copyFrom(`COPY ${target.qualified} (${cols}) FROM STDIN`));
    this.#stream = stream;
    this.#target = target;
    this.#sent = 0;
    this.#done = new Promise<void>((resolve, reject) => {
      stream.on('finish', resolve);
      stream.on('error', (err: Error) => reject(new Error(`capture store table ${target.name}: ${err.message}`)));
    });
    this.#done.catch(() => undefined); // observed by end() or write()
  }

  /** Waits for the socket to take what was written, or for the COPY to fail. */
  async #drained(): Promise<void> {
    const stream = this.#stream!;
    const drained = once(stream, 'drain').then(() => undefined, () => undefined);
    await Promise.race([drained, this.#done!.then(() => undefined)]);
  }
}
