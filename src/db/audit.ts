/**
 * The audit log's rows (tables audit_log and audit_head, migration 20261126-0262-01). Appends and
 * pruning run in one write transaction each, which first locks the head row: on PostgreSQL with
 * SELECT ... FOR UPDATE (several nodes append to one chain, one after another), on SQLite through
 * the write path (BEGIN IMMEDIATE: one writer across processes). The hash of each row is computed
 * by the caller's seal function (src/services/audit/chain.ts), over the row as stored.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';
import type { Reader } from './reader.ts';
import { forEngine } from './dialect/engine.ts';

/** An entry as stored, without its hash. */
export interface AuditFields {
  seq: number;
  at_ms: number;
  kind: string;
  actor: string | null;
  client: string | null;
  subject: string | null;
  /** Canonical JSON text. */
  details: string;
  prev_hash: string;
}

export interface AuditRow extends AuditFields {
  hash: string;
}

/** The chain's ends: the newest entry, and the last entry pruning removed (0 and 64 zeros before any). */
export interface AuditHead {
  head_seq: number;
  head_hash: string;
  pruned_seq: number;
  pruned_hash: string;
}

export type Seal = (fields: AuditFields) => string;
export type NewAudit = Omit<AuditFields, 'seq' | 'prev_hash'>;

const COLUMNS = 'seq, at_ms, kind, actor, client, subject, details, prev_hash, hash';

type RawRow = Record<keyof AuditRow, unknown>;
type RawHead = Record<keyof AuditHead, unknown>;

function toRow(r: RawRow): AuditRow {
  return {
    seq: Number(r.seq),
    at_ms: Number(r.at_ms),
    kind: String(r.kind),
    actor: r.actor == null ? null : String(r.actor),
    client: r.client == null ? null : String(r.client),
    subject: r.subject == null ? null : String(r.subject),
    details: String(r.details),
    prev_hash: String(r.prev_hash),
    hash: String(r.hash),
  };
}

function toHead(r: RawHead): AuditHead {
  return { head_seq: Number(r.head_seq), head_hash: String(r.head_hash), pruned_seq: Number(r.pruned_seq), pruned_hash: String(r.pruned_hash) };
}

const ZERO_HASH = '0'.repeat(64);
const GENESIS: AuditHead = { head_seq: 0, head_hash: ZERO_HASH, pruned_seq: 0, pruned_hash: ZERO_HASH };

/** Locks the head row, made first when the log is new (a concurrent maker waits for this one's commit). */
async function lockHead(db: Database, transaction: Transaction): Promise<AuditHead> {
  await db.sequelize.query('INSERT INTO audit_head (id, head_seq, head_hash, pruned_seq, pruned_hash) VALUES (1, 0, ?, 0, ?) ON CONFLICT (id) DO NOTHING', {
    replacements: [ZERO_HASH, ZERO_HASH],
    transaction,
  });
  const lock = forEngine(db.dialect.name, { postgres: ' FOR UPDATE', sqlite: '' });
  const [head] = (await db.sequelize.query(`SELECT head_seq, head_hash, pruned_seq, pruned_hash FROM audit_head WHERE id = 1${lock}`, {
    type: QueryTypes.SELECT,
    transaction,
  })) as RawHead[];
  return head ? toHead(head) : GENESIS;
}

/** Appends entries after the head, inside transaction t (the head is locked first). */
async function appendIn(db: Database, t: Transaction, entries: readonly NewAudit[], seal: Seal): Promise<AuditRow[]> {
  const head = await lockHead(db, t);
  let seq = head.head_seq;
  let prev = head.head_hash;
  const rows: AuditRow[] = [];
  for (const e of entries) {
    const fields: AuditFields = { ...e, seq: ++seq, prev_hash: prev };
    const row = { ...fields, hash: seal(fields) };
    await db.sequelize.query(`INSERT INTO audit_log (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, {
      replacements: [row.seq, row.at_ms, row.kind, row.actor, row.client, row.subject, row.details, row.prev_hash, row.hash],
      transaction: t,
    });
    rows.push(row);
    prev = row.hash;
  }
  await db.sequelize.query('UPDATE audit_head SET head_seq = ?, head_hash = ? WHERE id = 1', { replacements: [seq, prev], transaction: t });
  return rows;
}

/** Appends one entry to the chain; resolves with the row once committed. */
export async function appendAuditRow(db: Database, entry: NewAudit, seal: Seal): Promise<AuditRow> {
  const [row] = await db.writes.run((t) => appendIn(db, t, [entry], seal));
  return row!;
}

/**
 * Removes the entries older than beforeMs (a prefix of the chain: up to the newest such entry),
 * records the last removed entry's seq and hash as the anchor, and appends `note(removed)` as the
 * next entry, all in one transaction. Returns how many entries were removed (0: nothing changes).
 */
export async function pruneAuditRows(db: Database, beforeMs: number, seal: Seal, note: (removed: number, through: AuditRow) => NewAudit): Promise<number> {
  return db.writes.run(async (t) => {
    const head = await lockHead(db, t);
    const [last] = (await db.sequelize.query(`SELECT ${COLUMNS} FROM audit_log WHERE seq = (SELECT MAX(seq) FROM audit_log WHERE at_ms < ?)`, {
      replacements: [beforeMs],
      type: QueryTypes.SELECT,
      transaction: t,
    })) as RawRow[];
    if (!last) return 0;
    const through = toRow(last);
    const [count] = (await db.sequelize.query('SELECT COUNT(*) AS n FROM audit_log WHERE seq <= ?', { replacements: [through.seq], type: QueryTypes.SELECT, transaction: t })) as { n: unknown }[];
    const removed = Number(count?.n ?? 0);
    await db.sequelize.query('DELETE FROM audit_log WHERE seq <= ?', { replacements: [through.seq], transaction: t });
    await db.sequelize.query('UPDATE audit_head SET pruned_seq = ?, pruned_hash = ? WHERE id = 1', { replacements: [through.seq, through.hash], transaction: t });
    if (head.head_seq >= through.seq) await appendIn(db, t, [note(removed, through)], seal);
    return removed;
  });
}

/** The head row (before the first append: an empty chain). */
export async function auditHead(reader: Reader): Promise<AuditHead> {
  const [row] = await reader.all<RawHead>('SELECT head_seq, head_hash, pruned_seq, pruned_hash FROM audit_head WHERE id = 1');
  return row ? toHead(row) : GENESIS;
}

/** Which entries auditRows lists: seq after afterSeq, at or after sinceMs, of that client, of those kinds. */
export interface AuditFilter {
  afterSeq?: number;
  sinceMs?: number;
  /** Exactly this client address (as recorded). */
  client?: string;
  /** Any of these kinds (none: every kind). */
  kinds?: readonly string[];
  limit: number;
}

/** Entries in chain order matching the filter, at most limit. */
export async function auditRows(reader: Reader, opts: AuditFilter): Promise<AuditRow[]> {
  const where = ['seq > ?', 'at_ms >= ?'];
  const values: unknown[] = [opts.afterSeq ?? 0, opts.sinceMs ?? 0];
  if (opts.client !== undefined) {
    where.push('client = ?');
    values.push(opts.client);
  }
  if (opts.kinds && opts.kinds.length > 0) {
    where.push(`kind IN (${opts.kinds.map(() => '?').join(', ')})`);
    values.push(...opts.kinds);
  }
  const rows = await reader.all<RawRow>(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`, [...values, opts.limit]);
  return rows.map(toRow);
}
