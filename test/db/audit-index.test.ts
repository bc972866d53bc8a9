// `rigd audit --client` and `--kind` find their entries by index: the statement auditRows runs
// (recorded as it goes to the reader) is planned with audit_log_client_seq / audit_log_kind_seq,
// not as a walk of the whole log, on a log of 20,000 entries from 2,000 addresses (both engines).
import test from 'tape';
import { auditRows, type AuditFilter } from '../../src/db/audit.ts';
import type { Reader } from '../../src/db/reader.ts';
import { onPostgres, withDatabase } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ENTRIES = 20_000;
const RARE_CLIENT = '10.144.9.9';
const COMMON_KINDS = ['login.ok', 'login.failed', 'session.revoked', 'rig.refused', 'key.refused'];

/** The log's rows: 2,000 addresses of about ten entries each, three from RARE_CLIENT, three rig.forget. */
function row(seq: number): unknown[] {
  const rare = seq % 6_000 === 0;
  const client = rare ? RARE_CLIENT : `10.145.${(seq % 2_000) >> 8}.${seq % 256}`;
  const kind = seq % 6_000 === 3_000 ? 'rig.forget' : COMMON_KINDS[seq % COMMON_KINDS.length];
  return [seq, 1_700_000_000_000 + seq * 1_000, kind, `address:${client}`, client, 'rig01', '{}', '0'.repeat(64), '0'.repeat(64)];
}

/** What the engine says of the plan of sql, one line per step. */
async function plan(reader: Reader, sql: string, params: unknown[]): Promise<string> {
  const rows = await reader.all<Record<string, unknown>>(`EXPLAIN ${onPostgres ? '' : 'QUERY PLAN '}${sql}`, params);
  return rows.map((r) => String(onPostgres ? r['QUERY PLAN'] : r.detail)).join('\n');
}

test('audit filters by client and by kind are planned on their indexes', async (t) => {
  await withDatabase(tmpDir(), async (db) => {
    for (let start = 1; start <= ENTRIES; start += 500) {
      const rows = Array.from({ length: 500 }, (_, i) => row(start + i));
      const marks = rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
      await db.sequelize.query(`INSERT INTO audit_log (seq, at_ms, kind, actor, client, subject, details, prev_hash, hash) VALUES ${marks}`, { replacements: rows.flat() });
    }
    // PostgreSQL plans by its statistics, which autovacuum would gather in time; SQLite as rigd runs it, without.
    if (onPostgres) await db.sequelize.query('ANALYZE audit_log');

    const cases: [string, Omit<AuditFilter, 'limit'>, string, number][] = [
      ['--client', { client: RARE_CLIENT }, 'audit_log_client_seq', 3],
      ['--kind', { kinds: ['rig.forget'] }, 'audit_log_kind_seq', 3],
      ['--client with --kind', { client: RARE_CLIENT, kinds: ['login.ok', 'rig.forget'] }, 'audit_log_client_seq', 3],
    ];
    for (const [name, filter, index, count] of cases) {
      const seen: { sql: string; params: unknown[] }[] = [];
      const recording: Reader = {
        engine: db.reader.engine,
        all: (sql, params) => {
          seen.push({ sql, params: params ?? [] });
          return db.reader.all(sql, params);
        },
      };
      const rows = await auditRows(recording, { ...filter, limit: 100 });
      t.equal(rows.length, count, `${name}: the ${count} matching entries of ${ENTRIES}`);
      t.ok(rows.every((r, i) => i === 0 || r.seq > rows[i - 1].seq), `${name}: in chain order`);
      t.equal(seen.length, 1, `${name}: one statement`);
      const text = await plan(db.reader, seen[0].sql, seen[0].params);
      t.ok(text.includes(index), `${name}: planned on ${index}: ${text.replace(/\n/g, ' | ')}`);
    }
  });
});
