// PostgreSQL errors that are faults of the host: typed domain errors (503), whichever engine runs.
import test from 'tape';
import { databaseFault, postgresFault } from '../../src/db/faults.ts';

/** A driver error as Sequelize wraps it: the pg error (with its SQLSTATE) in .parent/.original. */
function wrapped(code: string, message = 'x'): Error {
  const original = Object.assign(new Error(message), { code });
  return Object.assign(new Error(message), { name: 'SequelizeDatabaseError', parent: original, original });
}

test('SQLSTATEs and unreachable servers map to disk_full, database_read_only, database_unavailable', (t) => {
  t.equal(postgresFault(wrapped('53100', 'could not extend file: No space left on device'))?.code, 'disk_full', '53100 disk_full');
  t.equal(postgresFault(wrapped('25006', 'cannot execute UPDATE in a read-only transaction'))?.code, 'database_read_only', '25006 read-only');
  t.equal(postgresFault(wrapped('57P01', 'terminating connection due to administrator command'))?.code, 'database_unavailable', '57P01 shut down');
  t.equal(postgresFault(wrapped('08006'))?.code, 'database_unavailable', 'class 08: connection failure');
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { name: 'SequelizeConnectionRefusedError', parent: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  t.equal(postgresFault(refused)?.code, 'database_unavailable', 'connection refused');
  t.equal(postgresFault(wrapped('23505', 'duplicate key value'))?.code, undefined, 'a unique violation is not a host fault');
  t.equal(postgresFault(wrapped('42P01', 'relation does not exist')), null, 'nor a missing table');
  t.equal(databaseFault(wrapped('53100'))?.code, 'disk_full', 'databaseFault (the write path) sees PostgreSQL faults too');
  t.equal(databaseFault(wrapped('SQLITE_FULL'))?.code, 'disk_full', 'and SQLite ones as before');
  t.end();
});
