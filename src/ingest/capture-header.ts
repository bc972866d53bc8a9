/** The cheap checks of a capture's first 100 bytes, in rigd's own process, before SQLite reads it. */
import { CaptureRejected } from './capture-rejected.ts';

export const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

export interface CaptureHeader {
  pageSize: number;
  /** Page count from the header when SQLite would trust it (change counter matches), else undefined. */
  headerPageCount?: number;
  sqliteVersion?: number;
}

/**
 * Checks size, magic and header of a capture without SQLite. Throws CaptureRejected.
 * `size` is the file's size in bytes; `head` its first (up to) 100 bytes.
 */
export function checkHeader(head: Buffer, size: number, maxBytes: number): CaptureHeader {
  if (size > maxBytes) {
    throw new CaptureRejected('too_large', `Capture is ${size} bytes, larger than the limit of ${maxBytes} bytes.`);
  }
  if (size === 0) throw new CaptureRejected('truncated', 'Capture is empty (0 bytes).');
  const n = Math.min(head.length, SQLITE_MAGIC.length);
  if (!head.subarray(0, n).equals(SQLITE_MAGIC.subarray(0, n))) {
    throw new CaptureRejected('not_sqlite', 'Capture is not a SQLite database (it does not start with the SQLite header).');
  }
  if (size < 100) {
    throw new CaptureRejected('truncated', `Capture is truncated: ${size} bytes is shorter than the 100-byte SQLite header.`);
  }
  const raw = head.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
    throw new CaptureRejected('not_sqlite', `Capture is not a usable SQLite database: its header gives an invalid page size (${raw}).`);
  }
  const writeVersion = head[18]!;
  const readVersion = head[19]!;
  if (![1, 2].includes(writeVersion) || ![1, 2].includes(readVersion)) {
    throw new CaptureRejected(
      'not_sqlite',
      `Capture is not a usable SQLite database: unsupported file format version ${writeVersion}/${readVersion}.`,
    );
  }
  if (size < 512 || size % pageSize !== 0) {
    throw new CaptureRejected(
      'truncated',
      `Capture is truncated: ${size} bytes is not a whole number of ${pageSize}-byte pages.`,
    );
  }
  const changeCounter = head.readUInt32BE(24);
  const validFor = head.readUInt32BE(92);
  const inHeader = head.readUInt32BE(28);
  const headerPageCount = inHeader > 0 && changeCounter === validFor ? inHeader : undefined;
  const filePages = size / pageSize;
  if (headerPageCount !== undefined && headerPageCount > filePages) {
    throw new CaptureRejected(
      'truncated',
      `Capture is truncated: its header says ${headerPageCount} pages but the file holds ${filePages}.`,
    );
  }
  const version = head.readUInt32BE(96);
  return { pageSize, headerPageCount, sqliteVersion: version > 0 ? version : undefined };
}
