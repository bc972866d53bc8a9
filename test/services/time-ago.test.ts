// The one time-ago of the CLI, the views and the pages: words for a glance (date-fns), or short.
import test from 'tape';
import { shortAge, timeAgo } from '../../src/services/time-ago.ts';

test('timeAgo: words for a glance, short in whole units rounded down; never negative', (t) => {
  const now = new Date('2026-11-23T12:00:00Z');
  const before = (s: number) => new Date(now.getTime() - s * 1000);
  const words: [number, string][] = [
    [10, 'less than a minute ago'],
    [20 * 60, '20 minutes ago'],
    [2 * 3600, 'about 2 hours ago'],
    [3 * 86400, '3 days ago'],
  ];
  for (const [s, text] of words) t.equal(timeAgo(before(s), now), text, `${s} s: ${text}`);
  const short: [number, string][] = [
    [0, '0 s'],
    [59.9, '59 s'],
    [60, '1 min'],
    [3599, '59 min'],
    [3600, '1 h'],
    [2 * 86400 - 1, '47 h'],
    [2 * 86400, '2 d'],
    [-30, '0 s'],
  ];
  for (const [s, text] of short) {
    t.equal(shortAge(before(s), now), text, `${s} s: ${text}`);
    t.equal(timeAgo(before(s), now, { short: true }), `${text} ago`, `${s} s: ${text} ago`);
  }
  t.equal(timeAgo(new Date(now.getTime() + 5 * 60_000), now), 'in 5 minutes', 'a time ahead of now says so');
  t.end();
});
