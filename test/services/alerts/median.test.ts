// The rhythm a rig's reports show: the median of the gaps between them, bursts left out.
import test from 'tape';
import { medianInterval } from '../../../src/services/alerts/rhythm.ts';

const times = (...secondsAgo: number[]) => secondsAgo.map((s) => new Date(Date.UTC(2026, 10, 26, 12) - s * 1000));

test('median of the gaps, newest first; one long silence does not move it', (t) => {
  t.deepEqual(medianInterval(times(0, 1, 2, 3, 4, 5)), { interval_s: 1, intervals: 5 }, 'every second');
  t.deepEqual(medianInterval(times(0, 1, 2, 3, 60, 61, 62)), { interval_s: 1, intervals: 6 }, 'a gap of 57 s among 1 s ones');
  t.deepEqual(medianInterval(times(0, 3, 6, 9)), { interval_s: 3, intervals: 3 }, 'every 3 s');
  t.deepEqual(medianInterval(times(0, 2, 4, 8, 12)), { interval_s: 3, intervals: 4 }, 'even count: the mean of the middle two');
  t.deepEqual(medianInterval(times(0, 0.1, 0.2, 0.3, 0.4, 5)), { interval_s: 4.6, intervals: 1 }, 'a burst (gaps under 0.5 s) is not a rhythm');
  t.deepEqual(medianInterval(times(0)), { interval_s: null, intervals: 0 }, 'one report: nothing learned');
  t.end();
});
