import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { Unprocessable } from '../../errors.ts';
import { verifyChain } from '../../services/audit/chain.ts';
import { readAudit, type AuditQuery, type AuditRecord } from '../../services/audit/log.ts';
import { parseClient, parseKinds } from '../audit-filters.ts';
import { printJson, withReader } from '../context.ts';
import { parseSince } from '../since.ts';
import { renderTable } from '../table.ts';
import { printLines, terminalText } from '../terminal-text.ts';
import { jsonText } from '../json-text.ts';

interface AuditOptions {
  since?: string;
  json?: boolean;
  follow?: boolean;
  client?: string;
  kind?: string;
}

/** How often --follow looks for new entries. */
const FOLLOW_MS = 1000;

function detailsText(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
}

function rowOf(e: AuditRecord): string[] {
  return [String(e.seq), e.at.slice(0, 19).replace('T', ' '), e.kind, e.actor ?? '', e.client ?? '', e.subject ?? '', detailsText(e.details)].map((c) => terminalText(c));
}

/** What `no audit entries` was looking for: " of kind rig.refused from 10.144.3.7 in the last 1h". */
function noneText(filter: AuditQuery, since: string | undefined): string {
  const kinds = filter.kinds ? ` of kind ${filter.kinds.join(' or ')}` : '';
  const client = filter.client ? ` from ${filter.client}` : '';
  return `${kinds}${client}${since ? ` in the last ${since}` : ''}`;
}

const HEADER = ['SEQ', 'TIME (UTC)', 'KIND', 'ACTOR', 'CLIENT', 'SUBJECT', 'DETAILS'];

/**
 * `rigd audit [--since 24h] [--client ADDRESS] [--kind KIND,...] [--json] [--follow]`: the audit
 * log's matching entries, oldest first. --follow keeps printing new matching entries (as NDJSON
 * with --json, one line per entry) until interrupted.
 */
export async function auditCommand(opts: AuditOptions, cmd: Command): Promise<void> {
  const sinceMs = opts.since ? Date.now() - parseSince(opts.since) : 0;
  const filter: AuditQuery = {
    sinceMs,
    client: opts.client === undefined ? undefined : parseClient(opts.client),
    kinds: opts.kind === undefined ? undefined : parseKinds(opts.kind),
  };
  await withReader(cmd, async (reader) => {
    const first: AuditRecord[] = [];
    for (let page = await readAudit(reader, filter); page.length > 0; page = await readAudit(reader, { ...filter, afterSeq: page[page.length - 1]!.seq })) {
      first.push(...page);
    }
    if (!opts.follow) {
      if (opts.json) return printJson(first);
      if (first.length === 0) return printLines(`no audit entries${noneText(filter, opts.since)}`);
      process.stdout.write(renderTable(HEADER, first.map(rowOf)));
      return;
    }
    const controller = new AbortController();
    const stop = () => controller.abort();
    const onError = (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? stop() : undefined);
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    process.stdout.on('error', onError);
    const print = (e: AuditRecord) => process.stdout.write(opts.json ? `${jsonText(e)}\n` : `${rowOf(e).filter(Boolean).join('  ')}\n`);
    try {
      // Entries before --since and other clients' or kinds' entries stay out of what follows too (last is 0 while none matched).
      let last = 0;
      for (const e of first) {
        print(e);
        last = e.seq;
      }
      while (!controller.signal.aborted) {
        await sleep(FOLLOW_MS, undefined, { signal: controller.signal }).catch(() => undefined);
        if (controller.signal.aborted) break;
        try {
          for (const e of await readAudit(reader, { ...filter, afterSeq: last, limit: 1000 })) {
            print(e);
            last = e.seq;
          }
        } catch (err) {
          process.stderr.write(`rigd: reading the audit log failed (${(err as Error).message}); trying again\n`);
        }
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.stdout.off('error', onError);
    }
  });
}

/** `rigd audit verify`: walks the chain; exit 1 naming the first broken entry. */
export async function auditVerifyCommand(_opts: unknown, cmd: Command): Promise<void> {
  // --json is also `rigd audit`'s option: commander gives it to whichever command it finds first.
  const opts = cmd.optsWithGlobals<{ json?: boolean }>();
  const verdict = await withReader(cmd, (reader) => verifyChain(reader));
  if (opts.json) printJson(verdict);
  if (verdict.broken) {
    throw new Unprocessable(`audit log broken at entry ${verdict.broken.seq}: it ${verdict.broken.problem} (${verdict.entries} entries before it are intact)`, 'audit_chain_broken');
  }
  if (!opts.json) printLines(`audit log intact: ${verdict.entries} entries, head ${verdict.headSeq} ${verdict.headHash}`);
}
