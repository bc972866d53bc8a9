import test from 'tape';
import { InvalidInput } from '../../../src/errors.ts';
import { MAX_TEXT, parseRigId, parseRigReport } from '../../../src/services/rigs/report-input.ts';

const good = { rig_serial: 'SN-1', gpsd_latitude: '47.3769', gpsd_longitude: '8.5417', local_ip: '192.168.1.20', software_version: '2.4.1', git_branch: 'main' };

function refusal(id: string, body: unknown): string {
  try {
    parseRigReport(id, body);
  } catch (err) {
    if (err instanceof InvalidInput) return err.message;
    throw err;
  }
  return 'accepted';
}

test('a full report is parsed; the id is lower-cased', (t) => {
  t.deepEqual(parseRigReport('Rig-07', good), {
    rigId: 'rig-07',
    serial: 'SN-1',
    latitude: 47.3769,
    longitude: 8.5417,
    lanIp: '192.168.1.20',
    version: '2.4.1',
    branch: 'main',
  });
  t.end();
});

test('rig id: a DNS label of 1-63 letters, digits, inner hyphens', (t) => {
  t.equal(parseRigId('a'), 'a', 'one character');
  t.equal(parseRigId('x'.repeat(63)), 'x'.repeat(63), '63 characters');
  t.equal(parseRigId('RIG-10'), 'rig-10', 'case-insensitive: stored lower-case');
  for (const id of ['', 'x'.repeat(64), '-rig', 'rig-', 'rig_1', 'rig.1', 'rig 1', 'rïg', '<b>']) {
    t.match(refusal(id, good), /^rig id must be a DNS label/, `"${id.slice(0, 20)}" refused`);
  }
  t.end();
});

test('rig_serial is required, bounded, printable', (t) => {
  t.equal(refusal('r', { ...good, rig_serial: undefined }), 'rig_serial is required', 'missing');
  t.equal(refusal('r', { ...good, rig_serial: '   ' }), 'rig_serial is required', 'blank');
  t.equal(refusal('r', null), 'rig_serial is required', 'no body at all');
  t.equal(refusal('r', { ...good, rig_serial: 'x'.repeat(MAX_TEXT + 1) }), `rig_serial must be at most ${MAX_TEXT} characters`, 'too long');
  t.equal(refusal('r', { ...good, rig_serial: 'a\u001b[31mb' }), 'rig_serial must be printable text (no control characters)', 'terminal escape refused');
  t.equal(refusal('r', { ...good, rig_serial: ['a', 'b'] }), 'rig_serial must be given once', 'repeated form field');
  t.equal(refusal('r', { ...good, rig_serial: { a: 1 } }), 'rig_serial must be a string', 'an object');
  t.equal(parseRigReport('r', { ...good, rig_serial: 12345 }).serial, '12345', 'a JSON number is taken as text');
  t.equal(parseRigReport('r', { ...good, rig_serial: '<script>x</script>' }).serial, '<script>x</script>', 'markup is stored as text (escaped when shown)');
  t.end();
});

test('latitude and longitude: decimals in range; empty, absent or nan = no fix', (t) => {
  for (const v of ['', 'nan', 'NaN', 'NAN', ' nan ', undefined, null]) {
    const r = parseRigReport('r', { ...good, gpsd_latitude: v, gpsd_longitude: v });
    t.deepEqual([r.latitude, r.longitude], [null, null], `${JSON.stringify(v)}: no fix`);
  }
  const edge = parseRigReport('r', { ...good, gpsd_latitude: '-90', gpsd_longitude: '180.0' });
  t.deepEqual([edge.latitude, edge.longitude], [-90, 180], 'bounds included');
  t.deepEqual([parseRigReport('r', { ...good, gpsd_latitude: '+.5' }).latitude], [0.5], '+.5');
  t.equal(parseRigReport('r', { ...good, gpsd_latitude: 12.25 }).latitude, 12.25, 'a JSON number');
  for (const v of ['90.0001', '-91', '1e1', 'Infinity', '0x10', '12,5', '12.5.1', 'abc', '--1']) {
    t.equal(refusal('r', { ...good, gpsd_latitude: v }), 'gpsd_latitude must be a decimal number between -90 and 90, empty or nan', `latitude "${v}" refused`);
  }
  t.equal(refusal('r', { ...good, gpsd_longitude: '180.5' }), 'gpsd_longitude must be a decimal number between -180 and 180, empty or nan', 'longitude 180.5 refused');
  t.end();
});

test('local_ip: an IP address (v4 or v6), or empty', (t) => {
  t.equal(parseRigReport('r', { ...good, local_ip: 'FE80::1' }).lanIp, 'fe80::1', 'IPv6, lower-cased');
  t.equal(parseRigReport('r', { ...good, local_ip: '' }).lanIp, null, 'empty: none');
  for (const v of ['192.168.1', '192.168.1.256', 'rig.local', 'fe80::1%eth0', 'javascript:alert(1)', '10.0.0.1/24']) {
    t.equal(refusal('r', { ...good, local_ip: v }), 'local_ip must be an IP address', `"${v}" refused`);
  }
  t.end();
});

test('version and branch: optional, bounded printable text', (t) => {
  const r = parseRigReport('r', { rig_serial: 'x' });
  t.deepEqual([r.version, r.branch], ['', ''], 'absent: empty');
  t.equal(refusal('r', { ...good, software_version: 'v'.repeat(MAX_TEXT + 1) }), `software_version must be at most ${MAX_TEXT} characters`);
  t.equal(refusal('r', { ...good, git_branch: 'main\nx' }), 'git_branch must be printable text (no control characters)');
  t.equal(parseRigReport('r', { ...good, git_branch: 'feature/ünïcode-ß' }).branch, 'feature/ünïcode-ß', 'non-ASCII letters are printable');
  t.equal(refusal('r', [1, 2]), 'the body must be a form or a JSON object', 'a JSON array');
  t.end();
});
