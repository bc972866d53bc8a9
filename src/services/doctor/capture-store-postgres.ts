/**
 * The capture store on PostgreSQL (schema rigd_captures of database.url): its table count and size.
 * Reads only; a missing schema is fine (the first import creates it).
 */
import { redactText } from '../../db/database-url.ts';
import { CAPTURE_STORE_SCHEMA } from '../../db/capture-store/postgres-schema.ts';
import { inspectCaptureStoreSchema } from '../../db/diagnostics/server-database.ts';
import { StoreUnreachable } from '../../db/capture-store/postgres-writer.ts';
import { errorText, fail, ok, type Finding } from './finding.ts';

export async function checkPgCaptureStore(url: string, schema = CAPTURE_STORE_SCHEMA): Promise<Finding> {
  const where = `schema ${schema} of ${redactText(url)}`;
  try {
    const facts = await inspectCaptureStoreSchema(url, schema);
    if (facts === null) return ok('capture_store', `${where} does not exist yet (the first capture import creates it)`);
    const mb = (facts.bytes / 1e6).toFixed(1);
    return ok('capture_store', `${where} opens: ${facts.tables} capture tables, ${mb} MB`);
  } catch (err) {
    // The server down or the login refused: the database line says so, with its fix; a grant cannot help.
    if (err instanceof StoreUnreachable) return fail('capture_store', `${where} cannot be used: ${redactText(errorText(err))}`, 'see the database line above');
    return fail('capture_store', `${where} cannot be used: ${redactText(errorText(err))}`, `give rigd's database role USAGE and CREATE on the database (the first import creates schema ${schema})`);
  }
}
