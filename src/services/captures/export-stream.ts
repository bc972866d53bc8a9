/**
 * The bytes of one export, as a Readable with backpressure: _read asks for the next piece, and a new
 * page is read from the store only once the consumer (the socket, a file) took what the previous
 * page made. A large value (pages.ts LargeValue) is read on its own, under a budget of bytes all
 * exports share (LARGE_VALUES_BYTES), and goes out in pieces of about 64 KiB. Whatever ends the stream (the end, an error, the client gone) closes its store handle at
 * once and calls onClose once.
 *
 * CSV: a header line, RFC 4180 quoting, CRLF, NULL as an empty field, blobs as base64; a large text
 * value is always quoted. NDJSON: one object per line, keys in the capture's column order, blobs as
 * base64 strings. Reals always with a point or an exponent (page-cells.ts ExactReal: 1.0 stays 1.0).
 */
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { isLarge, type LargeValue, type PageCell, type TablePages } from '../../db/capture-store/pages.ts';
import { ExactReal, type ExactValue } from '../../db/capture-store/page-cells.ts';
import { csvField } from '../csv.ts';
import { LargeValueBudget } from './export-slots.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Text gathered before it is handed on, and the most the stream buffers ahead of its consumer. */
const CHUNK = 16_384;
/** Units per piece of a large value: bytes of a blob (a multiple of 3, so base64 pieces join), base64 characters (a multiple of 4), text characters. */
const PIECE: Record<LargeValue['large'], number> = { blob: 3 * 21_846, base64: 65_536, text: 16_384, base64text: 65_536 };

/** Large values held at once by all exports of this process, bytes (LargeValueBudget). */
export const LARGE_VALUES_BYTES = 16 * 1024 ** 2;
const budget = new LargeValueBudget(LARGE_VALUES_BYTES);

/** What a large value weighs in memory: bytes, one per base64 character, two per text character (UTF-16). */
function weight(v: LargeValue): number {
  return v.large === 'text' || v.large === 'base64text' ? 2 * v.length : v.length;
}

/** A text held as the base64 of its UTF-8, back as text a piece at a time (whole groups of 4 characters, whole characters). */
function* decodedPieces(chunk: string, state: { carry: string; decoder: StringDecoder }): Generator<string> {
  const all = state.carry + chunk;
  const whole = all.length - (all.length % 4);
  for (let at = 0; at < whole; at += PIECE.base64text) yield* textPieces(state.decoder.write(Buffer.from(all.slice(at, Math.min(whole, at + PIECE.base64text)), 'base64')));
  state.carry = all.slice(whole);
}

/** The pieces of a text, never splitting a surrogate pair. */
function* textPieces(text: string): Generator<string> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + PIECE.text);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    yield text.slice(at, end);
    at = end;
  }
}

function csvValue(v: ExactValue): string {
  if (v instanceof ExactReal) return v.text;
  return Buffer.isBuffer(v) ? v.toString('base64') : csvField(v);
}

function jsonValue(v: ExactValue): string {
  if (v instanceof ExactReal) return v.text;
  if (Buffer.isBuffer(v)) return JSON.stringify(v.toString('base64'));
  return JSON.stringify(v) ?? 'null';
}

/**
 * The text of one large value, a piece at a time, as the format writes it: the value is read once its
 * share of the budget is free, and the share is held until its last piece is taken (or the export is
 * destroyed: the generator's return runs the finally).
 */
async function* largeText(pages: TablePages, v: LargeValue, format: ExportFormat): AsyncGenerator<string> {
  const text = v.large === 'text' || v.large === 'base64text';
  const quoted = text || format === 'ndjson';
  const escape = (piece: string) => (format === 'csv' ? piece.replaceAll('"', '""') : JSON.stringify(piece).slice(1, -1));
  // A store that reads a value in parts holds no more than its parts.
  const release = await budget.take(Math.min(weight(v), pages.largeHeld ?? Infinity));
  try {
    if (quoted) yield '"';
    let carry = Buffer.alloc(0);
    const held = { carry: '', decoder: new StringDecoder('utf8') };
    for await (const chunk of pages.large(v)) {
      if (v.large === 'base64text') {
        for (const piece of decodedPieces(String(chunk), held)) yield escape(piece);
      } else if (Buffer.isBuffer(chunk)) {
        // Base64 of whole groups of 3 bytes, so that the pieces join; the rest waits for the next chunk.
        const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        const whole = bytes.length - (bytes.length % 3);
        for (let at = 0; at < whole; at += PIECE.blob) yield bytes.subarray(at, Math.min(whole, at + PIECE.blob)).toString('base64');
        carry = Buffer.from(bytes.subarray(whole));
      } else if (!text) {
        for (let at = 0; at < chunk.length; at += PIECE.base64) yield chunk.slice(at, at + PIECE.base64);
      } else {
        for (const piece of textPieces(chunk)) yield escape(piece);
      }
    }
    if (v.large === 'base64text') {
      const rest = held.decoder.end(held.carry ? Buffer.from(held.carry, 'base64') : undefined);
      if (rest) yield escape(rest);
    }
    if (carry.length) yield carry.toString('base64');
    if (quoted) yield '"';
  } finally {
    release();
  }
}

/** How a format writes a row: what opens and ends it, what goes between values and before each. */
interface RowFormat {
  small: (v: ExactValue) => string;
  open: string;
  sep: string;
  end: string;
  prefix: (i: number) => string;
}

function rowFormat(columns: string[], format: ExportFormat): RowFormat {
  const keys = columns.map((c) => `${JSON.stringify(c)}:`);
  if (format === 'csv') return { small: csvValue, open: '', sep: ',', end: '\r\n', prefix: () => '' };
  return { small: jsonValue, open: '{', sep: ',', end: '}\n', prefix: (i) => keys[i]! };
}

/**
 * One page as the format writes it: its text already made bytes, and the large values it names in
 * between. Nothing of the page's rows is left in what it returns: a slow client keeps the bytes
 * made for it, never the rows (their strings would outlive young-generation collections and be kept
 * until V8's next full collection).
 */
function renderPage(page: PageCell[][], f: RowFormat, head: string): (Buffer | LargeValue)[] {
  const out: (Buffer | LargeValue)[] = [];
  let chunk = head;
  for (const row of page) {
    chunk += f.open;
    for (let i = 0; i < row.length; i++) {
      const cell = row[i]!;
      if (i > 0) chunk += f.sep;
      chunk += f.prefix(i);
      if (!isLarge(cell)) {
        chunk += f.small(cell);
        continue;
      }
      if (chunk) out.push(Buffer.from(chunk, 'utf8'));
      chunk = '';
      out.push(cell);
    }
    chunk += f.end;
    if (chunk.length >= CHUNK) {
      out.push(Buffer.from(chunk, 'utf8'));
      chunk = '';
    }
  }
  if (chunk) out.push(Buffer.from(chunk, 'utf8'));
  return out;
}

/** Every piece of the export: bytes of its pages, text of its large values. */
async function* pieces(pages: TablePages, columns: string[], format: ExportFormat): AsyncGenerator<Buffer | string> {
  const f = rowFormat(columns, format);
  let head = format === 'csv' ? `${columns.map((c) => csvField(c)).join(',')}\r\n` : '';
  for (;;) {
    let page: PageCell[][] | null = await pages.next();
    if (!page) break;
    const parts = renderPage(page, f, head);
    // Let go of the rows before waiting for the client (the generator waits at its yields).
    page = null;
    head = '';
    for (const part of parts) {
      if (Buffer.isBuffer(part)) yield part;
      else yield* largeText(pages, part, format);
    }
  }
  if (head) yield head;
}

export class ExportStream extends Readable {
  readonly #source: AsyncGenerator<Buffer | string>;
  #pulling = false;
  #onClose: (() => void) | undefined;

  constructor(
    private readonly pages: TablePages,
    columns: string[],
    format: ExportFormat,
    onClose?: () => void,
  ) {
    super({ highWaterMark: CHUNK });
    this.#source = pieces(pages, columns, format);
    this.#onClose = onClose;
    // 'close' comes after the end, an error, or destroy() (the response's socket closed early).
    this.once('close', () => void this.#release());
  }

  override _read(): void {
    if (this.#pulling) return;
    this.#pulling = true;
    void this.#pull();
  }

  /** Pieces while the consumer wants more; stops when push() says it has enough. */
  async #pull(): Promise<void> {
    try {
      for (;;) {
        const { value, done } = await this.#source.next();
        if (this.destroyed) return;
        if (done) {
          this.push(null);
          return;
        }
        if (!this.push(value, 'utf8')) return;
      }
    } catch (err) {
      if (!this.destroyed) this.destroy(err as Error);
    } finally {
      this.#pulling = false;
    }
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Runs the source's finally blocks (a large value's share of the budget) once it is suspended.
    this.#source.return(undefined).catch(() => undefined);
    this.#release().then(
      () => callback(err),
      () => callback(err),
    );
  }

  async #release(): Promise<void> {
    const done = this.#onClose;
    this.#onClose = undefined;
    done?.();
    await this.pages.close();
  }
}
