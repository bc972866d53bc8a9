/**
 * The order of software versions as rigs report them (`software_version`): semver-like, by numeric
 * segments, never by when a version was first seen.
 *
 * - A leading `v` is ignored, and so is build metadata after `+` (`v2.1.0+abc` is `2.1.0`).
 * - The release part is split on `.`: numeric segments compare as numbers (`1.10` > `1.9`), missing
 *   ones count as 0 (`2.0` = `2.0.0`); a segment that is not a number compares after the numbers,
 *   in natural order.
 * - A pre-release (after the first `-`) sorts before its release: `2.1.0-rc.1` < `2.1.0`. Two
 *   pre-releases compare by their `.`-separated identifiers as semver says: numbers as numbers, below
 *   text; `rc.2` < `rc.10`, `alpha` < `beta` < `rc`; more identifiers sort after fewer (`rc` < `rc.1`).
 * - A version that does not start with a digit (`unknown`, a commit hash) sorts below every one
 *   that does, and among themselves in natural order.
 */
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });

interface Parsed {
  numbered: boolean;
  release: string[];
  pre: string[] | null;
  raw: string;
}

function parse(version: string): Parsed {
  const text = version.trim().replace(/^[vV](?=\d)/, '').split('+')[0];
  const dash = text.indexOf('-');
  const release = (dash < 0 ? text : text.slice(0, dash)).split('.');
  const pre = dash < 0 ? null : text.slice(dash + 1).split('.');
  return { numbered: /^\d/.test(text), release, pre, raw: version };
}

const isNumber = (s: string) => /^\d+$/.test(s);

function compareNumbers(a: string, b: string): number {
  const [x, y] = [a.replace(/^0+(?=\d)/, ''), b.replace(/^0+(?=\d)/, '')];
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
}

function compareSegment(a: string, b: string): number {
  if (isNumber(a) && isNumber(b)) return compareNumbers(a, b);
  if (isNumber(a)) return -1;
  if (isNumber(b)) return 1;
  return collator.compare(a, b);
}

/** Negative when `a` is an older version than `b`, positive when newer, 0 when the same. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parse(a), parse(b)];
  if (x.numbered !== y.numbered) return x.numbered ? 1 : -1;
  if (!x.numbered) return collator.compare(x.raw, y.raw);
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const c = compareSegment(x.release[i] ?? '0', y.release[i] ?? '0');
    if (c !== 0) return c;
  }
  if (x.pre === null || y.pre === null) return x.pre === y.pre ? collator.compare(x.raw, y.raw) : x.pre === null ? 1 : -1;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    if (x.pre[i] === undefined) return -1;
    if (y.pre[i] === undefined) return 1;
    const c = compareSegment(x.pre[i], y.pre[i]);
    if (c !== 0) return c;
  }
  return collator.compare(x.raw, y.raw);
}

/** The newest of `versions` by compareVersions. */
export function newestVersion(versions: Iterable<string>): string | undefined {
  let newest: string | undefined;
  for (const v of versions) if (newest === undefined || compareVersions(v, newest) > 0) newest = v;
  return newest;
}
