/**
 * The capture store on PostgreSQL (schema rigd_captures of database.url): its table count and size.
 * Reads only; a missing schema is fine (the first import creates it).
 */
import { redactText } from '../../db/database-url.ts';
import { CAPTURE_STORE_SCHEMA } from '../../db/capture-store/postgres-schema.ts';
import { connectStore } from '../../db/capture-store/postgres-writer.ts';
import { errorText, fail, ok, type Finding } from './finding.ts';

export async function checkPgCaptureStore(url: string, schema = CAPTURE_STORE_SCHEMA): Promise<Finding> {
  const where = `schema ${schema} of ${redactText(url)}`;
  let client: Awaited<ReturnType<typeof connectStore>> | undefined;
  try {
    client = await connectStore(url);
    const { rows } = await client.query<{ present: boolean; n: string | number; bytes: string | number | null }>(
      `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present,
              count(c.oid) AS n, sum(pg_total_relation_size(c.oid)) AS bytes
         FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
        WHERE s.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname NOT IN ('rigd_store_tables', 'rigd_capture_tables')`,
      [schema],
    );
    const row = rows[0]!;
    if (!row.present) return ok('capture_store', `${where} does not exist yet (the first capture import creates it)`);
    const mb = (Number(row.bytes ?? 0) / 1e6).toFixed(1);
    return ok('capture_store', `${where} opens: ${Number(row.n)} capture tables, ${mb} MB`);
  } catch (err) {
    return fail('capture_store', `${where} cannot be used: ${redactText(errorText(err))}`, `give rigd's database role USAGE and CREATE on the database (the first import creates schema ${schema})`);
  } finally {
    await client?.end().catch(() => undefined);
  }
}
