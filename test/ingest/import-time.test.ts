// Time spans of imported tables: which column is the time, and how its values read as times.
import test from 'tape';
import { asIsoTime, timeColumn, timeSpan } from '../../src/ingest/import-time.ts';

test('the first timestamp-like column, by name or declared type', (t) => {
  const col = (name: string, type = 'INTEGER') => ({ name, type });
  t.equal(timeColumn([col('id'), col('ts'), col('time')]), 'ts', 'ts');
  t.equal(timeColumn([col('id'), col('Created_At')]), 'Created_At', '*_at, any case');
  t.equal(timeColumn([col('fix_time'), col('date')]), 'fix_time', '*_time');
  t.equal(timeColumn([col('id'), col('when', 'DATETIME')]), 'when', 'by declared type');
  t.equal(timeColumn([col('id'), col('timestamps'), col('attitude'), col('format')]), null, 'none (near misses do not count)');
  t.end();
});

test('numbers: epoch seconds or milliseconds by magnitude', (t) => {
  t.equal(asIsoTime(1700000000), '2023-11-14T22:13:20.000Z', 'seconds');
  t.equal(asIsoTime(1700000000.5), '2023-11-14T22:13:20.500Z', 'fractional seconds');
  t.equal(asIsoTime(1700000000123), '2023-11-14T22:13:20.123Z', 'milliseconds');
  t.equal(asIsoTime(1700000000123456), '2023-11-14T22:13:20.123Z', 'microseconds');
  t.equal(asIsoTime(0), '1970-01-01T00:00:00.000Z', 'zero');
  t.equal(asIsoTime(1e30), null, 'out of range');
  t.equal(asIsoTime('1700000000'), '2023-11-14T22:13:20.000Z', 'a number written as text');
  t.end();
});

test('text: ISO 8601 and SQLite datetime, UTC unless a zone is named', (t) => {
  t.equal(asIsoTime('2024-03-01 12:00:00'), '2024-03-01T12:00:00.000Z', 'SQLite datetime');
  t.equal(asIsoTime('2024-03-01T12:00:00.25'), '2024-03-01T12:00:00.250Z', 'fraction');
  t.equal(asIsoTime('2024-03-01T12:00:00+02:00'), '2024-03-01T10:00:00.000Z', 'zone');
  t.equal(asIsoTime('2024-03-01T12:00:00-0130'), '2024-03-01T13:30:00.000Z', 'zone without colon');
  t.equal(asIsoTime('2024-03-01'), '2024-03-01T00:00:00.000Z', 'date');
  t.equal(asIsoTime('2024-02-30'), null, 'not a real date');
  t.equal(asIsoTime('yesterday'), null, 'not a time');
  t.equal(asIsoTime(Buffer.from('2024')), null, 'a blob');
  t.equal(asIsoTime(null), null, 'NULL');
  t.end();
});

test('a span needs both ends; ends in order', (t) => {
  t.deepEqual(timeSpan(1, 2), { first: '1970-01-01T00:00:01.000Z', last: '1970-01-01T00:00:02.000Z' }, 'both');
  t.deepEqual(timeSpan(1, 'nope'), { first: null, last: null }, 'one unreadable end: none');
  t.deepEqual(timeSpan(1700000000, '2020-01-01'), { first: '2020-01-01T00:00:00.000Z', last: '2023-11-14T22:13:20.000Z' }, 'mixed types in order');
  t.end();
});
