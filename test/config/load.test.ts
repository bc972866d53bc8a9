import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { envName, loadConfig } from '../../src/config/load.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('defaults: embedded storage, data in ./data, the documented keys', (t) => {
  const { config, file } = loadConfig({ env: {} });
  t.equal(file, null, 'no file: built-in defaults (when /etc/rigd/config.yaml is absent)');
  t.equal(config.storage.driver, 'embedded');
  t.equal(config.data_dir, path.resolve('./data'), 'data_dir resolved against the working directory');
  t.deepEqual(config.server, { host: '0.0.0.0', port: 3000, base_url: 'http://localhost:3000', trusted_proxies: [], secure_cookies: false, cookie_secret: '', max_payload_bytes: 1048576, min_free_mb: 64, metrics_allow: ['127.0.0.0/8', '::1/128', '10.144.0.0/16'], health_allow: ['127.0.0.0/8', '::1/128', '10.144.0.0/16'] });
  t.deepEqual(config.page.allow, ['127.0.0.0/8', '::1/128', '10.144.0.0/16'], 'the pages: loopback and vpn.cidr');
  t.deepEqual(loadConfig({ env: { RIGD_VPN_CIDR: '10.200.0.0/16' } }).config.page.allow, ['127.0.0.0/8', '::1/128', '10.200.0.0/16'], 'left out, the allow lists follow vpn.cidr');
  t.deepEqual(config.vpn, { host: 'vpn.rigs.internal', cidr: '10.144.0.0/16', rig_domain: 'rigs.internal' });
  t.equal(config.storage.upload_url_ttl, 900);
  t.equal(config.storage.max_upload_size, 104857600);
  t.deepEqual(config.rigs, { online_after_s: 300, offline_after_s: 3600, history_retention_days: 90, address_binding: 'while_online', new_ids_per_address_per_hour: 100 });
  t.deepEqual(config.uploads, { open_per_rig: 1000, bytes_per_rig_per_day: 64 * 1024 ** 3, database_reserve_mb: 64, keep_expired_days: 7 });
  t.equal(config.ingest.concurrency, 2);
  t.ok(Object.isFrozen(config) && Object.isFrozen(config.server), 'frozen, deeply');
  t.end();
});

test('lookup order: --config, then RIGD_CONFIG; env overrides the file; flags override env', (t) => {
  const dir = tmpDir();
  const a = path.join(dir, 'a.yaml');
  const b = path.join(dir, 'b.yaml');
  writeFileSync(a, 'server:\n  port: 1111\nstorage:\n  minio:\n    access_key: from-file\n');
  writeFileSync(b, 'server:\n  port: 2222\n');
  t.equal(loadConfig({ file: a, env: { RIGD_CONFIG: b } }).config.server.port, 1111, '--config wins over RIGD_CONFIG');
  t.equal(loadConfig({ env: { RIGD_CONFIG: b } }).file, b, 'RIGD_CONFIG used');
  const env = { RIGD_SERVER_PORT: '3333', RIGD_STORAGE_MINIO_ACCESS_KEY: 'from-env', RIGD_SERVER_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8', RIGD_INGEST_AUTO_ENQUEUE: 'false' };
  const { config } = loadConfig({ file: a, env });
  t.equal(config.server.port, 3333, 'RIGD_SERVER_PORT overrides the file');
  t.equal(config.storage.minio.access_key, 'from-env', 'nested key: RIGD_STORAGE_MINIO_ACCESS_KEY');
  t.deepEqual(config.server.trusted_proxies, ['127.0.0.1', '10.0.0.0/8'], 'lists are comma-separated');
  t.equal(config.ingest.auto_enqueue, false, 'booleans converted');
  t.equal(loadConfig({ file: a, env, overrides: { server: { port: 4444 } } }).config.server.port, 4444, 'flags win');
  t.equal(envName(['storage', 'minio', 'public_endpoint']), 'RIGD_STORAGE_MINIO_PUBLIC_ENDPOINT');
  t.end();
});

test('a wrong key or value: one line naming the key and what is expected', (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'c.yaml');
  const cases: [string, RegExp][] = [
    ['server:\n  port: 70000\n', /ConfigError: config: server\.port: 70000 is out of range \(expected an integer from 0 to 65535\) \(from .*c\.yaml\)$/],
    ['storage:\n  driver: s3\n', /ConfigError: config: storage\.driver: "s3" is not allowed \(expected one of: embedded, minio\)/],
    ['vpn:\n  cidr: everything\n', /ConfigError: config: vpn\.cidr: "everything" is not an IPv4 CIDR \(expected .*like 10\.144\.0\.0\/16\)/],
    ['bogus: 1\n', /ConfigError: config: unknown key "bogus" \(expected one of: server, vpn, /],
    ['rigs:\n  online_after_s: 600\n  offline_after_s: 300\n', /config: rigs\.offline_after_s: 300 is not greater than rigs\.online_after_s/],
    ['- a list\n', /must hold a mapping of sections/],
    ['server: [\n', /is not valid YAML/],
  ];
  for (const [yaml, message] of cases) {
    writeFileSync(file, yaml);
    t.throws(() => loadConfig({ file, env: {} }), message, JSON.stringify(yaml));
  }
  t.throws(() => loadConfig({ env: { RIGD_INGEST_CONCURRENCY: 'lots' } }), /ConfigError: config: ingest\.concurrency: "lots" is not a number \(expected an integer from 1 to 64\) \(from RIGD_INGEST_CONCURRENCY\)$/, 'env source named');
  writeFileSync(file, '');
  t.equal(loadConfig({ file, env: {} }).config.server.port, 3000, 'an empty file is all defaults');
  t.end();
});

test('config.example.yaml lists every key with its default', (t) => {
  const example = loadConfig({ file: path.resolve('config.example.yaml'), env: {} }).config;
  t.deepEqual(example, loadConfig({ env: {} }).config, 'the example is exactly the defaults');
  const text = readFileSync(path.resolve('config.example.yaml'), 'utf8');
  const leaves = (obj: object, prefix: string[] = []): string[][] =>
    Object.entries(obj).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) ? leaves(v, [...prefix, k]) : [[...prefix, k]]));
  const missing = leaves(example).filter((p) => !new RegExp(`^\\s*${p[p.length - 1]}:`, 'm').test(text));
  t.deepEqual(missing, [], 'no key left out');
  t.end();
});
