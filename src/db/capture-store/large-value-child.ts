/**
 * Child process of pages.ts (SQLite): writes one large value of the capture store to stdout and
 * exits. The driver can only read a value whole; read here, its copies never enter rigd's own heap
 * or its allocator's arenas, and they are gone when the child exits.
 *
 *   node large-value-child.js FILE TABLE COLUMN ROWID_NAME ROWID CAPTURE_ID
 */
import { openSqliteReadOnly } from '../sqlite-read-only.ts';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';

const [file, table, column, rowidName, rowid, captureId] = process.argv.slice(2);
if (!file || !table || !column || !rowidName || !rowid || !captureId || !['rowid', '_rowid_', 'oid'].includes(rowidName)) process.exit(2);
const store = await openSqliteReadOnly(file);
const row = await new Promise<{ p: Buffer | string | null } | undefined>((resolve, reject) =>
  store.db.get(`SELECT ${quoteIdent(column)} AS p FROM ${quoteIdent(table)} WHERE ${rowidName} = ? AND ${quoteIdent(CAPTURE_ID_COLUMN)} = ?`, [Number(rowid), Number(captureId)], (err, r) =>
    err ? reject(err) : resolve(r as { p: Buffer | string | null } | undefined),
  ),
);
await store.close();
if (!row || row.p === null) process.exit(3);
process.stdout.end(Buffer.isBuffer(row.p) ? row.p : Buffer.from(row.p, 'utf8'), () => process.exit(0));
