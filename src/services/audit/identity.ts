/**
 * Rig identity on record: every event of src/services/rigs/identity-events.ts (refused reports,
 * takeovers, rebinds, forgets, key refusals) becomes one audit entry; quota refusals, which may come
 * by the thousand, go through the tally (one entry per rig and minute). The events are still logged
 * as before.
 */
import type { Database } from '../../db/index.ts';
import type { Logger } from '../../log.ts';
import type { IdentityEventDetails, IdentityEventKind, RecordIdentityEvent } from '../rigs/identity-events.ts';
import { appendAudit, cliActor, type AuditKind } from './log.ts';
import type { AuditTally } from './tally.ts';

const KINDS: Record<Exclude<IdentityEventKind, 'quota_refused'>, AuditKind> = {
  rig_report_refused: 'rig.refused',
  rig_takeover: 'rig.takeover',
  rig_rebind: 'rig.rebind',
  rig_forget: 'rig.forget',
  key_refused: 'key.refused',
};

/** Kinds an operator causes (rigd rigs rebind / forget): their actor is the command's user. */
const BY_OPERATOR = new Set<IdentityEventKind>(['rig_rebind', 'rig_forget']);

export type AuditedIdentityEvents = RecordIdentityEvent & {
  flush(): void;
  /** Resolves once every entry recorded so far is written (or its failure logged). */
  settled(): Promise<void>;
};

function text(v: IdentityEventDetails[string] | undefined): string | null {
  return v === undefined || v === null ? null : String(v);
}

export function auditIdentityEvents(logged: RecordIdentityEvent & { flush(): void }, db: Database, tally: AuditTally, log: Logger): AuditedIdentityEvents {
  const pending = new Set<Promise<void>>();
  const record = (kind: IdentityEventKind, details: IdentityEventDetails, requestId?: string) => {
    logged(kind, details, requestId);
    const client = text(details.address);
    if (kind === 'quota_refused') {
      tally.note({ kind: 'quota.refused', subject: text(details.rig) ?? '-', client });
      return;
    }
    const write = appendAudit(db, {
      kind: KINDS[kind],
      actor: BY_OPERATOR.has(kind) ? cliActor() : client ? `address:${client}` : null,
      client: BY_OPERATOR.has(kind) ? null : client,
      subject: text(details.rig) ?? text(details.key),
      details,
    }).then(
      () => undefined,
      (err: unknown) => log.warn('a rig identity event could not be written to the audit log', { event: kind, error: String(err) }),
    );
    pending.add(write);
    void write.finally(() => pending.delete(write));
  };
  return Object.assign(record, {
    flush: () => logged.flush(),
    settled: async () => {
      await Promise.all([...pending]);
    },
  });
}
