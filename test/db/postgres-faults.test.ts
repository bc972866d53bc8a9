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

test('a server gone, out of connections or past its timeouts is 503 database_unavailable / database_busy, with Retry-After', async (t) => {
  const { toHttpError } = await import('../../src/server/ext/errors.ts');
  const Boom = (await import('@hapi/boom')).default;
  t.equal(postgresFault(wrapped('53300', 'sorry, too many clients already'))?.code, 'database_unavailable', '53300 too many clients');
  t.equal(postgresFault(wrapped('57P03', 'the database system is starting up'))?.code, 'database_unavailable', '57P03 starting up');
  t.equal(postgresFault(wrapped('25P03', 'terminating connection due to idle-in-transaction timeout'))?.code, 'database_unavailable', '25P03 idle in transaction');
  t.equal(postgresFault(wrapped('55P03', 'canceling statement due to lock timeout'))?.code, 'database_busy', '55P03 lock timeout');
  t.equal(postgresFault(wrapped('57014', 'canceling statement due to statement timeout'))?.code, 'database_busy', '57014 statement timeout');
  for (const message of ['Connection terminated unexpectedly', 'Client has encountered a connection error and is not queryable', 'Connection terminated']) {
    t.equal(postgresFault(new Error(message))?.code, 'database_unavailable', `pg's codeless "${message}"`);
  }
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104 });
  t.equal(databaseFault(reset)?.code, 'database_unavailable', 'databaseFault maps a raw ECONNRESET (no SQLSTATE)');
  const acquire = Object.assign(new Error('Operation timeout'), { name: 'SequelizeConnectionAcquireTimeoutError' });
  t.equal(databaseFault(acquire)?.code, 'database_unavailable', 'a pool with no free connection in time');
  t.equal(databaseFault(new Error('relation "Connection terminated" does not exist')), null, 'a message that only quotes one is not mapped');
  const http = toHttpError(Boom.boomify(reset), 'req-1');
  t.equal(http.status, 503, 'HTTP 503');
  t.equal(http.code, 'database_unavailable', 'code database_unavailable');
  t.equal(http.headers['retry-after'], '1', 'Retry-After: 1');
  t.doesNotMatch(http.message, /ECONNRESET|stack|at /, 'the message says what happened, no driver text');
  const busy = toHttpError(Boom.boomify(wrapped('55P03', 'canceling statement due to lock timeout')), 'req-2');
  t.deepEqual([busy.status, busy.code, busy.headers['retry-after']], [503, 'database_busy', '1'], 'lock timeout: 503 database_busy, Retry-After');
  t.end();
});

test('FaultEpisodes: one line per episode, a new one after a quiet spell', async (t) => {
  const { FaultEpisodes } = await import('../../src/db/faults.ts');
  const e = new FaultEpisodes(10_000);
  t.equal(e.begins('db', 1000), true, 'the first fault begins an episode');
  t.equal(e.begins('db', 2000), false, 'the next one is part of it');
  t.equal(e.begins('db', 11_500), false, 'faults keep coming within the quiet time: still the same episode');
  t.equal(e.suppressed('db'), 2, 'two not logged');
  t.equal(e.begins('db', 30_000), true, 'after 10 s without a fault, a new episode');
  t.equal(e.begins('other', 30_001), true, 'kinds are apart');
  t.end();
});
