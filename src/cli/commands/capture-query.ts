import type { Command } from 'commander';
import type { StoreRow, StoreValue } from '../../db/capture-store/read.ts';
import { queryStore } from '../../services/captures/query.ts';
import { firstStatementEnd, isEmptySql } from '../../services/captures/sql-text.ts';
import { csvField } from '../../services/csv.ts';
import { printJson, readOnlyConfigFor } from '../context.ts';
import { UsageError } from '../fail.ts';
import { renderTable } from '../table.ts';

interface QueryOptions {
  json?: boolean;
  csv?: boolean;
  limit?: string;
  timeout?: string;
}

export const QUERY_DEFAULT_LIMIT = 1000;
export const QUERY_MAX_LIMIT = 1_000_000;
export const QUERY_DEFAULT_TIMEOUT_S = 30;

function cellText(v: StoreValue): string {
  if (v === null) return 'NULL';
  if (Buffer.isBuffer(v)) return `<blob ${v.length} bytes>`;
  return String(v);
}

/** Blobs as base64 text in --json and --csv. */
function plainValue(v: StoreValue): string | number | null {
  return Buffer.isBuffer(v) ? v.toString('base64') : v;
}

function positiveInt(flag: string, text: string, max: number): number {
  const n = /^[1-9]\d*$/.test(text) ? Number(text) : NaN;
  if (!(n <= max)) throw new UsageError(`${flag} must be an integer from 1 to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/** `rigd captures query "SQL" [--json|--csv] [--limit N] [--timeout S]`: SQL over the capture store, read-only. */
export async function capturesQueryCommand(sql: string, _opts: unknown, cmd: Command): Promise<void> {
  const opts = cmd.optsWithGlobals<QueryOptions>();
  if (opts.json && opts.csv) throw new UsageError('--csv and --json exclude each other');
  if (isEmptySql(sql)) throw new UsageError('the query is empty');
  if (!isEmptySql(sql.slice(firstStatementEnd(sql)))) throw new UsageError('one statement at a time: the query has more than one');
  const limit = positiveInt('--limit', opts.limit ?? String(QUERY_DEFAULT_LIMIT), QUERY_MAX_LIMIT);
  const timeoutS = positiveInt('--timeout', opts.timeout ?? String(QUERY_DEFAULT_TIMEOUT_S), 86_400);
  const config = await readOnlyConfigFor(cmd);
  const result = await queryStore(config.data_dir, sql, { limit, timeoutMs: timeoutS * 1000 }, config.database.url);
  if (result.truncated) process.stderr.write(`rigd: only the first ${limit} rows are shown (--limit)\n`);
  const plain = (r: StoreRow) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plainValue(v)]));
  if (opts.json) return printJson(result.rows.map(plain));
  if (opts.csv) {
    const lines = [result.columns.map((c) => csvField(c)).join(',')];
    for (const r of result.rows) lines.push(result.columns.map((c) => csvField(plainValue(r[c] ?? null))).join(','));
    process.stdout.write(result.columns.length ? `${lines.join('\r\n')}\r\n` : '');
    return;
  }
  if (result.rows.length === 0) {
    process.stdout.write('no rows\n');
    return;
  }
  process.stdout.write(renderTable(result.columns, result.rows.map((r) => result.columns.map((c) => cellText(r[c] ?? null)))));
}
