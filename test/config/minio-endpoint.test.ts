// storage.minio.endpoint as operators write it: a URL with a scheme and no port means the scheme's
// port (https 443, http 80), a bare host keeps storage.minio.port (default 9000), and a port key set
// next to a URL that names another port is refused at load naming both keys. Signed URLs handed to
// rigs carry the port rigd resolved.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { loadConfig } from '../../src/config/load.ts';
import { createStorage, MinioStorage } from '../../src/storage/index.ts';
import { tmpDir } from '../helpers/tmp.ts';

const KEYS = 'access_key: rigd, secret_key: rigd-secret';

function load(minio: string, env: Record<string, string> = {}) {
  const file = path.join(tmpDir(), 'config.yaml');
  writeFileSync(file, `storage: {driver: minio, minio: {${KEYS}, ${minio}}}\n`);
  return { file, config: loadConfig({ file, env }).config };
}

function errorFor(minio: string, env: Record<string, string> = {}): string {
  try {
    load(minio, env);
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
  return 'loaded';
}

function minio(minioKeys: string, env: Record<string, string> = {}): MinioStorage {
  const storage = createStorage(load(minioKeys, env).config);
  if (!(storage instanceof MinioStorage)) throw new Error('expected the minio driver');
  return storage;
}

// [storage.minio keys, where rigd connects, the object URL rigs are given]
const RESOLVED: [string, string, string][] = [
  ['endpoint: "https://minio.example"', 'https://minio.example:443', 'https://minio.example/captures/a.db'],
  ['endpoint: "http://minio.example"', 'http://minio.example:80', 'http://minio.example/captures/a.db'],
  ['endpoint: "HTTPS://Minio.Example/"', 'https://minio.example:443', 'https://minio.example/captures/a.db'],
  ['endpoint: "https://minio.example:9443"', 'https://minio.example:9443', 'https://minio.example:9443/captures/a.db'],
  ['endpoint: "https://minio.example:9443", port: 9443', 'https://minio.example:9443', 'https://minio.example:9443/captures/a.db'],
  // The URL names no port: the port key, set explicitly, says which.
  ['endpoint: "https://minio.example", port: 9000', 'https://minio.example:9000', 'https://minio.example:9000/captures/a.db'],
  ['endpoint: "https://minio.example", port: 443', 'https://minio.example:443', 'https://minio.example/captures/a.db'],
  // A bare host: no scheme, so the port key (default 9000) and use_ssl say how.
  ['endpoint: minio.example', 'http://minio.example:9000', 'http://minio.example:9000/captures/a.db'],
  ['endpoint: minio.example, use_ssl: true', 'https://minio.example:9000', 'https://minio.example:9000/captures/a.db'],
  ['endpoint: minio.example, port: 80', 'http://minio.example:80', 'http://minio.example/captures/a.db'],
  ['endpoint: "minio.example:9001"', 'http://minio.example:9001', 'http://minio.example:9001/captures/a.db'],
  ['endpoint: "[::1]:9000"', 'http://[::1]:9000', 'http://[::1]:9000/captures/a.db'],
  ['endpoint: "[::1]"', 'http://[::1]:9000', 'http://[::1]:9000/captures/a.db'],
  // An IPv6 literal on the scheme's port: the minio client wrote its signed GET URL as "https://::1/...".
  ['endpoint: "https://[::1]"', 'https://[::1]:443', 'https://[::1]/captures/a.db'],
  ['endpoint: "[fd00::1]", port: 80', 'http://[fd00::1]:80', 'http://[fd00::1]/captures/a.db'],
];

test('minio endpoint: a URL without a port means its scheme\'s port; a bare host keeps storage.minio.port', async (t) => {
  for (const [keys, where, objectUrl] of RESOLVED) {
    const storage = minio(keys);
    t.equal(`${storage.internal.protocol}//${storage.internal.hostname}:${storage.internal.port}`, where, `${keys}: rigd connects to ${where}`);
    t.equal(storage.objectUrl('a.db'), objectUrl, `${keys}: object URL ${objectUrl}`);
    const put = await storage.presignPut('a.db', 60, { size: 5 });
    const get = await storage.presignGet('a.db', 60);
    t.ok(put.startsWith(`${objectUrl}?`), `${keys}: signed PUT URL ${put.slice(0, 60)}...`);
    t.ok(get.startsWith(`${objectUrl}?`), `${keys}: signed GET URL ${get.slice(0, 60)}...`);
    const unsized = await storage.presignPut('a.db', 60);
    t.ok(unsized.startsWith(`${objectUrl}?`), `${keys}: signed PUT URL without a size ${unsized.slice(0, 60)}...`);
  }
});

test('minio endpoint: RIGD_STORAGE_MINIO_PORT counts as setting the port', (t) => {
  const storage = minio('endpoint: "https://minio.example"', { RIGD_STORAGE_MINIO_PORT: '9000' });
  t.equal(storage.internal.port, 9000, 'the port set in the environment wins over the scheme\'s');
  t.end();
});

test('minio endpoint: a port key that contradicts the port in the URL is refused, naming both keys', (t) => {
  const line = errorFor('endpoint: "https://minio.example:9443", port: 9000');
  t.match(line, /^ConfigError: config: storage\.minio\.port: 9000 contradicts storage\.minio\.endpoint "https:\/\/minio\.example:9443" \(port 9443\)/, line);
  t.match(line, /\(from .*config\.yaml\)$/, 'names where the value came from');
  const env = errorFor('endpoint: "http://minio.example:9001"', { RIGD_STORAGE_MINIO_PORT: '9000' });
  t.match(env, /storage\.minio\.port: 9000 contradicts storage\.minio\.endpoint .*\(from RIGD_STORAGE_MINIO_PORT\)$/, env);
  const bare = errorFor('endpoint: "minio.example:9443", port: 9000');
  t.match(bare, /storage\.minio\.port: 9000 contradicts storage\.minio\.endpoint "minio\.example:9443" \(port 9443\)/, bare);
  t.end();
});

// [storage.minio keys, the key the line names, what it must say]
const REFUSED: [string, string, RegExp][] = [
  // An IPv6 zone cannot be written in a URL: it was accepted, then every command stopped on "TypeError: Invalid URL".
  ['endpoint: "[fe80::1%eth0]:9000"', 'storage.minio.endpoint', /"\[fe80::1%eth0\]:9000" has an IPv6 zone \(%eth0\)/],
  ['public_endpoint: "[fe80::1%eth0]"', 'storage.minio.public_endpoint', /has an IPv6 zone \(%eth0\)/],
  // Port 0 was taken: rigd connected to port 0, and signed URLs left the port out.
  ['endpoint: "minio.example:0"', 'storage.minio.endpoint', /"minio\.example:0" has port 0 \(expected a port from 1 to 65535/],
  ['endpoint: "https://minio.example:0"', 'storage.minio.endpoint', /has port 0 \(expected a port from 1 to 65535/],
  ['public_endpoint: "minio.example:0"', 'storage.minio.public_endpoint', /has port 0/],
  // An IPv6 address without brackets: say how to write it.
  ['endpoint: "::1"', 'storage.minio.endpoint', /"::1" is an IPv6 address without brackets \(expected like \[::1\] or \[::1\]:9000\)/],
  ['endpoint: "fd00::5:9000"', 'storage.minio.endpoint', /is an IPv6 address without brackets/],
  // A bare host with a trailing "/" (as a URL may have): say what to write instead.
  ['endpoint: "minio.example:9000/"', 'storage.minio.endpoint', /"minio\.example:9000\/" has a "\/" after the host \(expected minio\.example:9000, or an http\(s\) URL like http:\/\/minio\.example:9000\/\)/],
  // use_ssl set against the endpoint URL's scheme: the scheme won silently (plain HTTP with use_ssl: true).
  ['endpoint: "http://minio.example", use_ssl: true', 'storage.minio.use_ssl', /^ConfigError: config: storage\.minio\.use_ssl: true contradicts storage\.minio\.endpoint "http:\/\/minio\.example" \(an http URL\)/],
  ['endpoint: "https://minio.example", use_ssl: false', 'storage.minio.use_ssl', /storage\.minio\.use_ssl: false contradicts storage\.minio\.endpoint "https:\/\/minio\.example" \(an https URL\)/],
];

test('minio endpoint: values rigd cannot use are refused at load, naming the key', (t) => {
  for (const [keys, key, says] of REFUSED) {
    const line = errorFor(keys);
    t.ok(line.startsWith(`ConfigError: config: ${key}: `), `${keys}: names ${key}: ${line}`);
    t.match(line, says, `${keys}: says what is wrong`);
    t.doesNotMatch(line, /TypeError|\n\s+at /, `${keys}: no stack`);
  }
  t.equal(errorFor('endpoint: "https://minio.example", use_ssl: true'), 'loaded', 'use_ssl agreeing with the scheme is fine');
  t.equal(errorFor('endpoint: "[fe80::1]:9000"'), 'loaded', 'a link-local address without a zone loads');
  t.end();
});

test('bucket names MinIO refuses are refused at load, saying why', (t) => {
  const bucketError = (bucket: string) => {
    const file = path.join(tmpDir(), 'config.yaml');
    writeFileSync(file, `storage: {bucket: "${bucket}"}\n`);
    try {
      loadConfig({ file, env: {} });
      return 'loaded';
    } catch (err) {
      return `${(err as Error).name}: ${(err as Error).message}`;
    }
  };
  // MinIO refuses ".-" and "-." (its bucket creation answers InvalidBucketName), and the minio client
  // refuses any name holding four dot-separated numbers before sending a request.
  for (const [bucket, says] of [
    ['captures-.old', /has "-\." or "\.-"/],
    ['captures.-old', /has "-\." or "\.-"/],
    ['logs-10.0.0.1', /holds an IP address form \(10\.0\.0\.1\)/],
    ['999.1.1.1', /holds an IP address form \(999\.1\.1\.1\)/],
  ] as const) {
    const line = bucketError(bucket);
    t.match(line, new RegExp(`^ConfigError: config: storage\\.bucket: "${bucket.replace(/\./g, '\\.')}" is not an S3 bucket name`), line);
    t.match(line, says, `${bucket}: says why`);
  }
  for (const bucket of ['captures', 'rig-files.2026', 'a.b', 'v1.2.3']) t.equal(bucketError(bucket), 'loaded', `${bucket} loads`);
  t.end();
});

test('an endpoint with user:password@ is refused without printing the password', (t) => {
  for (const keys of ['endpoint: "http://rigd:s3cr3t-pw@minio.example:9000"', 'public_endpoint: "https://rigd:s3cr3t-pw@minio.example"', 'endpoint: "rigd:s3cr3t-pw@minio.example:9000"']) {
    const line = errorFor(keys);
    t.match(line, /^ConfigError: config: storage\.minio\.(public_)?endpoint: /, `${keys}: refused, naming the key: ${line}`);
    t.doesNotMatch(line, /s3cr3t-pw/, `${keys}: the password is not in the line`);
    t.match(line, /\*\*\*@minio\.example/, `${keys}: the user info shows as ***`);
  }
  t.end();
});
