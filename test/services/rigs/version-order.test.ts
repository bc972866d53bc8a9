// Version order for `rigd fleet`: numeric segments, pre-releases before their release, never the
// order versions were first seen in.
import test from 'tape';
import { compareVersions, newestVersion } from '../../../src/services/rigs/version-order.ts';

test('versions sort by numeric segments, pre-releases before their release', (t) => {
  const sorted = ['2.1', '1.9', '1.10', '2.1-rc.10', '2.1-rc.2', '2.1-beta', '2.0.1', 'v2.0.0', '10.0', '2.1-rc', 'unknown', '0.9.9', '2.1+build.7', 'abc123'].sort(compareVersions);
  t.deepEqual(
    sorted,
    ['abc123', 'unknown', '0.9.9', '1.9', '1.10', 'v2.0.0', '2.0.1', '2.1-beta', '2.1-rc', '2.1-rc.2', '2.1-rc.10', '2.1', '2.1+build.7', '10.0'],
    'unversioned first; 1.9 < 1.10; v and build metadata ignored; beta < rc < rc.2 < rc.10 < the release',
  );
  t.ok(compareVersions('2.0.1', '2.0') > 0 && compareVersions('2.0', '2.0.1') < 0, '2.0.1 after 2.0 (a missing segment counts as 0)');
  t.ok(compareVersions('2.0', '1.99.99') > 0, '2.0 after 1.99.99');
  t.ok(compareVersions('1.2.3-rc.1', '1.2.3-1') > 0, 'a text identifier after a number');
  t.ok(compareVersions('1.0.0-alpha', '1.0.0-alpha.1') < 0, 'fewer pre-release identifiers first');
  t.ok(compareVersions('1.3', '1.02') > 0 && compareVersions('1.02', '1.1') > 0, 'leading zeros: 1.02 is 1.2');
  t.equal(newestVersion(['2.1', '1.9', '2.1', '2.0']), '2.1', 'the newest of a branch');
  t.equal(newestVersion([]), undefined, 'none');
  t.end();
});
