/**
 * The audit log's hash chain. Each entry's hash is SHA-256 (hex) over a canonical encoding of the
 * entry as stored: the JSON array [seq, at_ms, kind, actor, client, subject, details, prev_hash],
 * where details is itself canonical JSON text (object keys sorted, no spaces). prev_hash is the
 * previous entry's hash (64 zeros for the first entry ever). Editing any field of an entry changes
 * its hash; removing one breaks the next entry's prev_hash or the head's hash.
 */
import { createHash } from 'node:crypto';
import { auditHead, auditRows, type AuditFields, type AuditRow } from '../../db/audit.ts';
import type { Reader } from '../../db/reader.ts';

export const GENESIS_HASH = '0'.repeat(64);

/** JSON text with object keys sorted at every depth (undefined values left out, as JSON.stringify does). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** The hash of an entry (see the file's comment). */
export function sealAudit(f: AuditFields): string {
  const encoded = JSON.stringify([f.seq, f.at_ms, f.kind, f.actor, f.client, f.subject, f.details, f.prev_hash]);
  return createHash('sha256').update(encoded, 'utf8').digest('hex');
}

export interface ChainVerdict {
  ok: boolean;
  /** Entries checked. */
  entries: number;
  /** The newest entry's seq and hash as the head records them. */
  headSeq: number;
  headHash: string;
  /** The first broken entry (its seq) and what is wrong with it; absent when ok. */
  broken?: { seq: number; problem: string };
}

const PAGE = 1000;

/**
 * Walks the whole chain from the pruning anchor to the head: every entry's hash must match its
 * content, every prev_hash the entry before it, seqs must follow each other with no gap, and the
 * last entry must be the head. Stops at the first broken entry.
 */
export async function verifyChain(reader: Reader): Promise<ChainVerdict> {
  const head = await auditHead(reader);
  let expectSeq = head.pruned_seq + 1;
  let prevHash = head.pruned_seq === 0 ? GENESIS_HASH : head.pruned_hash;
  let entries = 0;
  const verdict = (broken?: ChainVerdict['broken']): ChainVerdict => ({ ok: !broken, entries, headSeq: head.head_seq, headHash: head.head_hash, ...(broken ? { broken } : {}) });
  for (;;) {
    // The first page from the very start: an entry older than the anchor is found too.
    const rows: AuditRow[] = await auditRows(reader, { afterSeq: entries === 0 ? 0 : expectSeq - 1, limit: PAGE });
    if (entries === 0 && rows.length > 0 && rows[0]!.seq < expectSeq) {
      return verdict({ seq: rows[0]!.seq, problem: `is older than the pruning anchor (entry ${head.pruned_seq})` });
    }
    for (const row of rows) {
      if (row.seq !== expectSeq) {
        return verdict({ seq: expectSeq, problem: `is missing (the next entry found is ${row.seq})` });
      }
      if (sealAudit(row) !== row.hash) return verdict({ seq: row.seq, problem: 'was changed: its content does not match its hash' });
      if (row.prev_hash !== prevHash) {
        return verdict({ seq: row.seq, problem: `does not follow entry ${row.seq - 1}: its previous hash does not match (an entry before it was changed or replaced)` });
      }
      entries++;
      prevHash = row.hash;
      expectSeq++;
    }
    if (rows.length < PAGE) break;
  }
  if (expectSeq - 1 < head.head_seq) return verdict({ seq: expectSeq, problem: `is missing (the head is entry ${head.head_seq})` });
  if (expectSeq - 1 > head.head_seq) return verdict({ seq: head.head_seq + 1, problem: 'is past the head: it was not appended by rigd' });
  if (head.head_seq > head.pruned_seq && prevHash !== head.head_hash) return verdict({ seq: head.head_seq, problem: 'does not match the head hash' });
  return verdict();
}
