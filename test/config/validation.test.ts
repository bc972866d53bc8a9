// Every value is validated at load: a bad one stops every command with one line naming the key, the
// value, what is allowed and where it came from; exit 2; never a stack trace.
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { loadConfig } from '../../src/config/load.ts';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { sqliteOnly } from '../helpers/dialect.ts';

/** The ConfigError line loadConfig throws for this YAML, or null when it loads. */
function errorFor(yaml: string, env: Record<string, string> = {}): string | null {
  const file = path.join(tmpDir(), 'config.yaml');
  writeFileSync(file, yaml);
  try {
    loadConfig({ file, env });
    return null;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
}

const q = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// [yaml, key, value as printed, what the line must say]
const BAD: [string, string, string, RegExp][] = [
  // CIDRs (vpn.cidr, every trusted_proxies entry): parsed as ipaddr.js parses them, prefix in range
  ['vpn: {cidr: 10.144.0.0/33}', 'vpn.cidr', '"10.144.0.0/33"', /is not an IPv4 CIDR \(expected .*like 10\.144\.0\.0\/16\)/],
  ['vpn: {cidr: 10.144.0.0}', 'vpn.cidr', '"10.144.0.0"', /is not an IPv4 CIDR/],
  ['vpn: {cidr: 10.300.0.0/16}', 'vpn.cidr', '"10.300.0.0/16"', /is not an IPv4 CIDR/],
  ['vpn: {cidr: 012.144.0.0/16}', 'vpn.cidr', '"012.144.0.0/16"', /is not an IPv4 CIDR/],
  ['vpn: {cidr: "fd00::/8"}', 'vpn.cidr', '"fd00::/8"', /is not an IPv4 CIDR/],
  ['server: {trusted_proxies: [10.0.0.1, 10.0.0.0/33]}', 'server.trusted_proxies[1]', '"10.0.0.0/33"', /is not an IP address or CIDR \(expected like 10\.0\.0\.1, 10\.0\.0\.0\/8 or fd00::\/8\)/],
  ['server: {trusted_proxies: "fd00::/129"}', 'server.trusted_proxies', '"fd00::/129"', /is not an IP address or CIDR/],
  ['server: {trusted_proxies: [proxy.example]}', 'server.trusted_proxies[0]', '"proxy.example"', /is not an IP address or CIDR/],
  // ports: integers 0-65535
  ['server: {port: 70000}', 'server.port', '70000', /is out of range \(expected an integer from 0 to 65535\)/],
  ['server: {port: -1}', 'server.port', '-1', /is out of range \(expected an integer from 0 to 65535\)/],
  ['server: {port: 80.5}', 'server.port', '80.5', /is not an integer \(expected an integer from 0 to 65535\)/],
  ['server: {port: http}', 'server.port', '"http"', /is not a number \(expected an integer from 0 to 65535\)/],
  ['storage: {minio: {port: 0}}', 'storage.minio.port', '0', /is out of range \(expected an integer from 1 to 65535\)/],
  // URLs: scheme and shape
  ['server: {base_url: "ftp://gw.example"}', 'server.base_url', '"ftp://gw.example"', /has scheme ftp, not http or https \(expected an http\(s\) URL like /],
  ['server: {base_url: "http://"}', 'server.base_url', '"http://"', /is not a URL \(expected an http\(s\) URL/],
  ['server: {base_url: "http://admin:pw@gw.example"}', 'server.base_url', '"http://admin:pw@gw.example"', /carries a user name or password/],
  ['server: {base_url: "http://gw.example:99999"}', 'server.base_url', '"http://gw.example:99999"', /is not a URL/],
  ['storage: {public_url: "http://gw.example/?x=1"}', 'storage.public_url', '"http://gw.example/?x=1"', /has a query or fragment/],
  ['storage: {public_url: "gw.example:3000"}', 'storage.public_url', '"gw.example:3000"', /\(expected an http\(s\) URL/],
  // endpoints (host[:port] or URL)
  ['storage: {minio: {endpoint: "minio example"}}', 'storage.minio.endpoint', '"minio example"', /is not a host or endpoint \(expected host\[:port\] or an http\(s\) URL/],
  ['storage: {minio: {public_endpoint: "minio.example:70000"}}', 'storage.minio.public_endpoint', '"minio.example:70000"', /has port 70000, above 65535/],
  // MinIO serves buckets at the root of its address: a path would be left out of signed URLs and requests
  ['storage: {minio: {endpoint: "http://minio.internal:9000/minio"}}', 'storage.minio.endpoint', '"http://minio.internal:9000/minio"', /has a path \(\/minio\); MinIO is reached at the root of its address \(expected host\[:port\] or an http\(s\) URL/],
  ['storage: {minio: {public_endpoint: "https://gw.example/storage/"}}', 'storage.minio.public_endpoint', '"https://gw.example/storage/"', /has a path \(\/storage\/\); MinIO is reached at the root/],
  ['page: {map_tiles_url: "ftp://tiles.example/{z}/{x}/{y}.png"}', 'page.map_tiles_url', '"ftp://tiles.example/{z}/{x}/{y}.png"', /has scheme ftp, not http or https \(expected an http\(s\) URL template with \{z\}, \{x\} and \{y\}/],
  ['page: {map_tiles_url: "https://tiles.example/{z}/{x}.png"}', 'page.map_tiles_url', '"https://tiles.example/{z}/{x}.png"', /lacks \{y\}/],
  ['page: {map_tiles_url: "https://tiles.example/{z}/{x}/{y}.png?key={apikey}"}', 'page.map_tiles_url', '"https://tiles.example/{z}/{x}/{y}.png?key={apikey}"', /has an unknown placeholder \{apikey\}/],
  ['page: {map_tiles_url: "https://u:p@tiles.example/{z}/{x}/{y}.png"}', 'page.map_tiles_url', '"https://u:p@tiles.example/{z}/{x}/{y}.png"', /carries a user name or password/],
  ['page: {map_tiles_url: "tiles.example/{z}/{x}/{y}.png"}', 'page.map_tiles_url', '"tiles.example/{z}/{x}/{y}.png"', /is not a URL/],
  // sizes and durations: non-negative integers with sane maxima
  ['storage: {max_upload_size: -1}', 'storage.max_upload_size', '-1', /is out of range \(expected an integer from 0 to 5368709120\)/],
  ['storage: {max_upload_size: 1e15}', 'storage.max_upload_size', '1000000000000000', /is out of range/],
  ['server: {max_payload_bytes: 0}', 'server.max_payload_bytes', '0', /is out of range \(expected an integer from 1 to 67108864\)/],
  ['auth: {max_sessions_per_user: 0}', 'auth.max_sessions_per_user', '0', /is out of range \(expected an integer from 1 to 100000\)/],
  ['auth: {max_sessions_per_user: -3}', 'auth.max_sessions_per_user', '-3', /is out of range \(expected an integer from 1 to 100000\)/],
  ['auth: {max_sessions_per_user: 2.5}', 'auth.max_sessions_per_user', '2.5', /is not an integer \(expected an integer from 1 to 100000\)/],
  ['auth: {max_sessions_per_user: many}', 'auth.max_sessions_per_user', '"many"', /is not a number/],
  ['ingest: {read_bytes_per_s: 1.5}', 'ingest.read_bytes_per_s', '1.5', /is not an integer/],
  ['ingest: {concurrency: 1000}', 'ingest.concurrency', '1000', /is out of range \(expected an integer from 1 to 64\)/],
  ['storage: {upload_url_ttl: 0}', 'storage.upload_url_ttl', '0', /is out of range \(expected an integer from 1 to 604800\)/],
  ['rigs: {online_after_s: 600, offline_after_s: 300}', 'rigs.offline_after_s', '300', /is not greater than rigs\.online_after_s \(expected more than 600\)/],
  // host names
  ['vpn: {host: "vpn_host"}', 'vpn.host', '"vpn_host"', /is not a host name or address \(expected .*like vpn\.rigs\.internal\)/],
  ['vpn: {rig_domain: "-rigs.internal"}', 'vpn.rig_domain', '"-rigs.internal"', /is not a host name or address/],
  ['server: {host: "0.0.0.0:3000"}', 'server.host', '"0.0.0.0:3000"', /is not a host name or address \(expected .*like 0\.0\.0\.0\)/],
  ['storage: {bucket: "Captures_2024"}', 'storage.bucket', '"Captures_2024"', /is not an S3 bucket name/],
  // paths
  ['data_dir: /proc/self', 'data_dir', '"/proc/self"', /is under \/proc \(expected a directory outside \/proc, \/sys and \/dev/],
  ['data_dir: /sys/kernel/rigd', 'data_dir', '"/sys/kernel/rigd"', /is under \/sys/],
  ['data_dir: /dev/shm/rigd', 'data_dir', '"/dev/shm/rigd"', /is under \/dev/],
  ['data_dir: /etc/hostname', 'data_dir', '"/etc/hostname"', /is not a directory/],
  ['data_dir: /etc/hostname/rigd', 'data_dir', '"/etc/hostname/rigd"', /cannot be created: \/etc\/hostname is not a directory/],
  ['data_dir: ""', 'data_dir', '""', /is empty/],
  // numbers that must be over a bound (not at it): the line says so
  ['alerts: {outage_share: 0}', 'alerts.outage_share', '0', /is out of range \(expected a number over 0 and at most 1\)/],
  ['alerts: {outage_share: 1.5}', 'alerts.outage_share', '1.5', /is out of range \(expected a number over 0 and at most 1\)/],
  ['notify: {timeout_s: 0}', 'notify.timeout_s', '0', /is out of range \(expected a number over 0 and at most 300\)/],
  // kinds: choices, booleans, text, sections
  ['storage: {driver: s3}', 'storage.driver', '"s3"', /is not allowed \(expected one of: embedded, minio\)/],
  ['log: {level: verbose}', 'log.level', '"verbose"', /is not allowed \(expected one of: debug, info, warn, error, silent\)/],
  ['ingest: {auto_enqueue: perhaps}', 'ingest.auto_enqueue', '"perhaps"', /is not true or false/],
  ['storage: {minio: {region: 5}}', 'storage.minio.region', '5', /is not text/],
  ['server: 3000', 'server', '3000', /is not a section \(expected keys under it: host, port, /],
];

test('a bad value of each kind: one line with the key, the value, what is allowed and the file', (t) => {
  for (const [yaml, key, value, says] of BAD) {
    const line = errorFor(`${yaml}\n`);
    if (!line) {
      t.fail(`${yaml}: loaded`);
      continue;
    }
    t.ok(line.startsWith(`ConfigError: config: ${key}: ${value} `), `${yaml}: names ${key} and ${value} (${line})`);
    t.match(line, says, `${yaml}: says what is allowed`);
    t.match(line, /\(from \/.*config\.yaml\)$/, `${yaml}: names the file`);
    t.notOk(line.includes('\n'), `${yaml}: one line`);
  }
  t.end();
});

test('secrets are never printed, even when wrong', (t) => {
  const line = errorFor('server: {cookie_secret: "hunter2-hunter2"}\n');
  t.match(line ?? '', /^ConfigError: config: server\.cookie_secret: \(hidden, 15 characters\) is too short \(expected at least 32 characters, or empty\)/);
  t.notOk(line?.includes('hunter2'), 'the value itself is not in the line');
  t.end();
});

test('good values of the same kinds load', (t) => {
  const good = [
    'vpn: {cidr: 10.144.0.0/16}',
    'vpn: {cidr: 0.0.0.0/0}',
    'server: {trusted_proxies: [127.0.0.1, 10.0.0.0/8, "::1", "fd00::/8"]}',
    'server: {port: 0, host: "::"}',
    'server: {base_url: "https://rigs.example/fleet"}',
    'storage: {public_url: "http://[fd00::1]:3000"}',
    'storage: {minio: {endpoint: "minio.internal:9000", public_endpoint: "https://minio.example"}}',
    'storage: {minio: {endpoint: "[::1]:9000"}}',
    'storage: {minio: {endpoint: "http://minio.internal:9000/", public_endpoint: "https://minio.example/"}}',
    'storage: {max_upload_size: 0}',
    'server: {cookie_secret: ""}',
    'page: {map_tiles_url: ""}',
    'page: {map_tiles_url: "https://{s}.tiles.example/{z}/{x}/{y}{r}.png?key=abc"}',
    'page: {map_tiles_url: "http://127.0.0.1:8080/tiles/{z}/{x}/{y}.png"}',
  ];
  for (const yaml of good) t.equal(errorFor(`${yaml}\n`), null, yaml);
  t.end();
});

test('environment overrides are validated the same way, and named as the source', (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ RIGD_VPN_CIDR: '10.144.0.0/33' }, /^config: vpn\.cidr: "10\.144\.0\.0\/33" is not an IPv4 CIDR .* \(from RIGD_VPN_CIDR\)$/],
    [{ RIGD_SERVER_TRUSTED_PROXIES: '10.0.0.1, 300.0.0.1' }, /^config: server\.trusted_proxies\[1\]: "300\.0\.0\.1" is not an IP address or CIDR .* \(from RIGD_SERVER_TRUSTED_PROXIES\)$/],
    [{ RIGD_SERVER_PORT: '65536' }, /^config: server\.port: 65536 is out of range \(expected an integer from 0 to 65535\) \(from RIGD_SERVER_PORT\)$/],
    [{ RIGD_SERVER_BASE_URL: 'localhost' }, /^config: server\.base_url: "localhost" is not a URL .* \(from RIGD_SERVER_BASE_URL\)$/],
    [{ RIGD_STORAGE_MAX_UPLOAD_SIZE: '-5' }, /^config: storage\.max_upload_size: -5 is out of range .* \(from RIGD_STORAGE_MAX_UPLOAD_SIZE\)$/],
    [{ RIGD_DATA_DIR: '/proc/self' }, /^config: data_dir: "\/proc\/self" is under \/proc .* \(from RIGD_DATA_DIR\)$/],
    [{ RIGD_SERVER_COOKIE_SECRET: 'short' }, /^config: server\.cookie_secret: \(hidden, 5 characters\) is too short .* \(from RIGD_SERVER_COOKIE_SECRET\)$/],
  ];
  const file = path.join(tmpDir(), 'config.yaml');
  writeFileSync(file, 'server: {port: 3000}\n');
  for (const [env, says] of cases) {
    try {
      loadConfig({ file, env });
      t.fail(`${JSON.stringify(env)}: loaded`);
    } catch (err) {
      t.match((err as Error).message, says, JSON.stringify(env));
    }
  }
  try {
    loadConfig({ env: {}, overrides: { server: { host: 'not a host' } } });
    t.fail('a bad --host loaded');
  } catch (err) {
    t.match((err as Error).message, /^config: server\.host: "not a host" is not a host name or address .* \(from the command line\)$/, '--host named as the command line');
  }
  t.end();
});

test('a symbolic link into /proc is refused as data_dir too', (t) => {
  const dir = tmpDir();
  symlinkSync('/proc/self', path.join(dir, 'link'));
  const line = errorFor(`data_dir: ${path.join(dir, 'link', 'rigd')}\n`);
  t.match(line ?? '', new RegExp(`^ConfigError: config: data_dir: "${q(dir)}/link/rigd" is under /proc through `), line ?? 'loaded');
  t.end();
});

test('a relative data_dir in a config file is relative to that file; from the environment, to the working directory', (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'etc', 'config.yaml');
  mkdirSync(path.dirname(file));
  writeFileSync(file, 'data_dir: ./state\n');
  t.equal(loadConfig({ file, env: {} }).config.data_dir, path.join(dir, 'etc', 'state'), 'next to the config file');
  writeFileSync(file, 'data_dir: ../var/rigd\n');
  t.equal(loadConfig({ file, env: {} }).config.data_dir, path.join(dir, 'var', 'rigd'), '.. works too');
  t.equal(loadConfig({ file, env: { RIGD_DATA_DIR: 'here' } }).config.data_dir, path.resolve('here'), 'RIGD_DATA_DIR: the working directory');
  t.equal(loadConfig({ env: {} }).config.data_dir, path.resolve('data'), 'no file: ./data in the working directory');
  writeFileSync(file, 'data_dir: ./hosts/x\n');
  writeFileSync(path.join(dir, 'etc', 'hosts'), 'a file\n');
  t.throws(() => loadConfig({ file, env: {} }), new RegExp(`config: data_dir: "\\./hosts/x" \\(${q(path.join(dir, 'etc', 'hosts', 'x'))}\\) cannot be created: .*hosts is not a directory`), 'the error shows both forms');
  t.end();
});

const STACK = /\n\s+at /;

test('through bin/rigd: exit 2, one line on stderr, no stack trace, for any command', async (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'config.yaml');
  const data = path.join(dir, 'data');
  const runs: [string, string[], Record<string, string>, RegExp][] = [
    ['vpn: {cidr: 10.144.0.0/33}\n', ['rigs'], { RIGD_DATA_DIR: data }, /^rigd: config: vpn\.cidr: "10\.144\.0\.0\/33" is not an IPv4 CIDR \(expected .*\) \(from .*config\.yaml\)\n$/],
    ['data_dir: /proc/self\n', ['serve', '--port', '0'], {}, /^rigd: config: data_dir: "\/proc\/self" is under \/proc .*\n$/],
    ['server: {trusted_proxies: [10.0.0.0/40]}\n', ['user', 'list'], { RIGD_DATA_DIR: data }, /^rigd: config: server\.trusted_proxies\[0\]: "10\.0\.0\.0\/40" is not an IP address or CIDR/],
    ['', ['migrate'], { RIGD_DATA_DIR: data, RIGD_SERVER_BASE_URL: 'gw.example' }, /^rigd: config: server\.base_url: "gw\.example" is not a URL .*\(from RIGD_SERVER_BASE_URL\)\n$/],
    ['storage: {max_upload_size: -1}\n', ['uploads', '--json'], { RIGD_DATA_DIR: data }, /^rigd: config: storage\.max_upload_size: -1 is out of range/],
  ];
  for (const [yaml, args, env, says] of runs) {
    writeFileSync(file, yaml);
    const res = await rigd(['--config', file, ...args], { env, timeoutMs: 20_000 });
    const what = `${args.join(' ')} with ${yaml.trim() || JSON.stringify(env)}`;
    t.equal(res.code, 2, `${what}: exit 2`);
    t.match(res.stderr, says, `${what}: the line`);
    t.equal(res.stderr.split('\n').length, 2, `${what}: one line`);
    t.doesNotMatch(res.stderr, STACK, `${what}: no stack trace`);
    t.equal(res.stdout, '', `${what}: nothing on stdout`);
  }
  t.notOk(existsSync(path.join(data, 'rigd.sqlite')), 'no command went on to create a database');
});

test('rigd doctor and the CLI use a relative data_dir next to the config file, and doctor prints it absolute', async (t) => {
  if (sqliteOnly(t, 'the SQLite file the CLI creates in data_dir is what shows where data_dir resolved')) return;
  const dir = tmpDir();
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'data_dir: ./state\nvpn: {cidr: 127.0.0.0/8}\n');
  const add = await rigd(['--config', file, 'user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env: {}, input: 'ana-password' });
  t.equal(add.code, 0, `user add (${add.stderr.trim()})`);
  t.ok(existsSync(path.join(dir, 'state', 'rigd.sqlite')), 'the database is next to the config file, not in the working directory');
  const doctor = await rigd(['--config', file, 'doctor'], { env: {} });
  const state = q(path.join(dir, 'state'));
  t.match(doctor.stdout, new RegExp(`^ok\\s+config\\s+${q(file)} is valid; data_dir ${state}$`, 'm'), 'the config line names the absolute data_dir');
  t.match(doctor.stdout, new RegExp(`^ok\\s+data_dir\\s+${state} is writable`, 'm'), 'the data_dir check shows it absolute');
  const json = await rigd(['--config', file, 'doctor', '--json'], { env: {} });
  t.equal(JSON.parse(json.stdout).data_dir, path.join(dir, 'state'), '--json: data_dir, absolute');
});
