/**
 * The audit log's public API: appendAudit(db, entry) records one security-relevant action at the
 * end of the hash chain (src/services/audit/chain.ts); readAudit lists entries. Anything in rigd
 * that must be on record calls appendAudit once, where the action happens.
 *
 * Kinds (`area.what`; AUDIT_KINDS lists those rigd writes today, other `area.what` names are taken):
 *   login.ok, login.failed          a login with the client address; subject the login as given
 *   session.revoked                 DELETE /api/v1/sessions, a logout from the pages, or a login past
 *                                   auth.max_sessions_per_user (how: limit)
 *   user.add, user.remove, user.passwd, user.set, user.unlock
 *                                   operator changes to users (user.set: email, admin)
 *   user.settings                   an admin's change of another user's rig UI settings (details: bytes)
 *   ingest.triggered, ingest.forced a capture queued by `rigd ingest` or the webhook
 *   backup, restore, db.copy        the database commands
 *   audit.pruned                    retention removed entries (details: removed, through_seq, through_hash)
 *   audit.overflow                  refusals past the tally's bound in one minute (AuditTally)
 *   rig.takeover, rig.refused, rig.rebind, rig.forget, key.refused, quota.refused
 *                                   rig identity and bounds (quota refusals aggregated per rig and minute)
 */
import os from 'node:os';
import { appendAuditRow, auditRows, type AuditRow } from '../../db/audit.ts';
import type { Database } from '../../db/index.ts';
import type { Reader } from '../../db/reader.ts';
import { InvalidInput } from '../../errors.ts';
import { canonicalJson, sealAudit } from './chain.ts';

export const AUDIT_KINDS = [
  'login.ok',
  'login.failed',
  'session.revoked',
  'user.add',
  'user.remove',
  'user.passwd',
  'user.set',
  'user.unlock',
  'user.settings',
  'ingest.triggered',
  'ingest.forced',
  'backup',
  'restore',
  'db.copy',
  'audit.pruned',
  'audit.overflow',
  'rig.takeover',
  'rig.refused',
  'rig.rebind',
  'rig.forget',
  'key.refused',
  'quota.refused',
] as const;

export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditEntry {
  kind: AuditKind | (string & {});
  /** Who did it: "user:NAME" (an API session), "cli:USER" (an operator's command, see cliActor), "rig:ID", "webhook". */
  actor?: string | null;
  /** The client address the action came from, when over HTTP. */
  client?: string | null;
  /** What it was done to: a user name, a rig id, a capture, a file. */
  subject?: string | null;
  /** Anything more, as JSON (kept in canonical form). */
  details?: Record<string, unknown>;
  /** When (ms since the epoch); now by default. */
  atMs?: number;
}

/** An entry as listed. */
export interface AuditRecord {
  seq: number;
  at: string;
  kind: string;
  actor: string | null;
  client: string | null;
  subject: string | null;
  details: Record<string, unknown>;
  hash: string;
}

const KIND = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const MAX_KIND = 64;
const MAX_TEXT = 300;
const MAX_DETAILS = 16 * 1024;

const clip = (text: string | null | undefined, max = MAX_TEXT): string | null => (text == null ? null : text.length > max ? text.slice(0, max) : text);

/** Whether text has the shape of an audit kind (`area.what`, lower case, at most 64 characters). */
export function isAuditKind(text: string): boolean {
  return text.length <= MAX_KIND && KIND.test(text);
}

/** Appends one entry to the audit log; resolves once it is committed. */
export async function appendAudit(db: Database, entry: AuditEntry): Promise<AuditRecord> {
  if (!isAuditKind(entry.kind)) throw new InvalidInput(`"${entry.kind}" is not an audit kind (area.what, lower case)`);
  const details = canonicalJson(entry.details ?? {});
  if (details.length > MAX_DETAILS) throw new InvalidInput(`audit details of ${details.length} bytes (at most ${MAX_DETAILS})`);
  const row = await appendAuditRow(
    db,
    { at_ms: entry.atMs ?? Date.now(), kind: entry.kind, actor: clip(entry.actor), client: clip(entry.client, 100), subject: clip(entry.subject), details },
    sealAudit,
  );
  return toRecord(row);
}

export function toRecord(row: AuditRow): AuditRecord {
  return {
    seq: row.seq,
    at: new Date(row.at_ms).toISOString(),
    kind: row.kind,
    actor: row.actor,
    client: row.client,
    subject: row.subject,
    details: JSON.parse(row.details) as Record<string, unknown>,
    hash: row.hash,
  };
}

/** Which entries readAudit lists (client: exactly that recorded address; kinds: any of them). */
export interface AuditQuery {
  afterSeq?: number;
  sinceMs?: number;
  client?: string;
  kinds?: readonly string[];
  limit?: number;
}

/** Entries after afterSeq, at or after sinceMs, of client and kinds when given, oldest first, at most limit. */
export async function readAudit(reader: Reader, opts: AuditQuery): Promise<AuditRecord[]> {
  return (await auditRows(reader, { ...opts, limit: opts.limit ?? 10_000 })).map(toRecord);
}

/** The actor of an operator's command: the system user running rigd. */
export function cliActor(): string {
  try {
    return `cli:${os.userInfo().username}`;
  } catch {
    return `cli:uid ${process.getuid?.() ?? 'unknown'}`;
  }
}
