// Absolute times name their zone: ISO 8601 with a numeric offset (never "Z"), and for people the
// offset with the zone's short name. TZ is changed inside the process (Node re-reads it).
import test from 'tape';
import { dateText, isoWithOffset, utcOffset } from '../../src/services/date-text.ts';
import { positionRuns } from '../../src/services/rigs/detail.ts';

const AT = new Date('2026-11-23T07:37:30.123Z');

function inZone<T>(tz: string, fn: () => T): T {
  const before = process.env.TZ;
  process.env.TZ = tz;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

test('isoWithOffset and dateText in several zones', (t) => {
  const cases: [string, string, string][] = [
    ['UTC', '2026-11-23T07:37:30+00:00', '2026-11-23 07:37:30 +00:00 (UTC)'],
    ['Europe/Berlin', '2026-11-23T08:37:30+01:00', '2026-11-23 08:37:30 +01:00 (CET)'],
    ['Asia/Kolkata', '2026-11-23T13:07:30+05:30', '2026-11-23 13:07:30 +05:30'],
    ['America/St_Johns', '2026-11-23T04:07:30-03:30', '2026-11-23 04:07:30 -03:30'],
  ];
  for (const [tz, iso, absolute] of cases) {
    inZone(tz, () => {
      t.equal(isoWithOffset(AT), iso, `${tz}: ISO 8601 with offset`);
      t.equal(new Date(isoWithOffset(AT, { ms: true })).getTime(), AT.getTime(), `${tz}: the same moment, milliseconds kept`);
      t.equal(dateText(AT), absolute, `${tz}: full`);
    });
  }
  t.equal(inZone('UTC', () => utcOffset(AT)), '+00:00', 'UTC is +00:00, not Z');
  t.end();
});

test('dateText: the time of day alone names its zone; utc-minute is the same in every zone', (t) => {
  const cases: [string, string][] = [
    ['UTC', '07:37:30 UTC'],
    ['Europe/Berlin', '08:37:30 CET'],
    ['America/Sao_Paulo', '04:37:30 -03:00'],
  ];
  for (const [tz, clock] of cases) {
    inZone(tz, () => {
      t.equal(dateText(AT, 'clock'), clock, `${tz}: clock`);
      t.equal(dateText(AT, 'utc-minute'), '2026-11-23 07:37 UTC', `${tz}: utc-minute`);
    });
  }
  t.end();
});

test('position runs: a parked stretch is one run, newest first, at most N runs', (t) => {
  const row = (iso: string, lat: number) => ({ received_at: iso, latitude: lat, longitude: 1 });
  const rows = [row('2026-11-23T05:00:00Z', 2), row('2026-11-23T04:00:00Z', 2), row('2026-11-23T03:00:00Z', 1), row('2026-11-23T02:00:00Z', 2), row('2026-11-23T01:00:00Z', 3)];
  const runs = inZone('UTC', () => positionRuns(rows, 3));
  t.deepEqual(
    runs.map((r) => [r.latitude, r.reports, r.first_at, r.last_at]),
    [
      [2, 2, '2026-11-23T04:00:00.000Z', '2026-11-23T05:00:00.000Z'],
      [1, 1, '2026-11-23T03:00:00.000Z', '2026-11-23T03:00:00.000Z'],
      [2, 1, '2026-11-23T02:00:00.000Z', '2026-11-23T02:00:00.000Z'],
    ],
    'runs, the same place again later is a new run, cut at three',
  );
  t.end();
});
