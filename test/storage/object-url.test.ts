// parseObjectUrl on both drivers: our object URLs in, everything else out (webhook bodies are hostile).
import test from 'tape';
import type { ObjectStorage } from '../../src/storage/contract.ts';
import { EmbeddedStorage } from '../../src/storage/embedded.ts';
import { MinioStorage } from '../../src/storage/minio.ts';
import { caught } from '../helpers/storage-contract.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';

const tmp = tempDir();
test.onFinish(() => tmp.cleanup());

const embedded = new EmbeddedStorage(testConfig({ data_dir: tmp.dir })); // public base http://vpn.rigs.internal:3000
const embeddedPrefixed = new EmbeddedStorage(testConfig({ data_dir: tmp.dir, storage: { public_url: 'https://gw.example.org/storage/' } }));
const minio = new MinioStorage(
  testConfig({ storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port: 9000, access_key: 'k', secret_key: 's', public_endpoint: 'vpn.rigs.internal:9000' } } }),
);

/** Hostile URLs, built around `good` (an accepted URL of key "a/b.db") so they differ in one way each. */
function hostile(s: ObjectStorage): string[] {
  const good = new URL(s.objectUrl('a/b.db'));
  const scheme = good.protocol;
  const host = good.host;
  const b = s.bucket;
  const o = `${scheme}//${host}`;
  const p = good.pathname.slice(0, good.pathname.indexOf(`/${b}/`)); // path prefix ('' or '/storage')
  return [
    // other hosts
    `${scheme}//169.254.169.254${p}/${b}/a/b.db`,
    `${scheme}//169.254.169.254:80${p}/${b}/a/b.db`,
    `${scheme}//127.0.0.1${p}/${b}/a/b.db`,
    `${scheme}//127.0.0.1:3000${p}/${b}/a/b.db`,
    `${scheme}//localhost:3000${p}/${b}/a/b.db`,
    `${scheme}//[::1]:3000${p}/${b}/a/b.db`,
    `${scheme}//[::ffff:127.0.0.1]:9000${p}/${b}/a/b.db`,
    `${scheme}//[::ffff:7f00:1]:9000${p}/${b}/a/b.db`,
    `${scheme}//0x7f.0.0.1:9000${p}/${b}/a/b.db`,
    `${scheme}//2130706433:9000${p}/${b}/a/b.db`,
    `${scheme}//evil.example${p}/${b}/a/b.db`,
    `${scheme}//${good.hostname}.evil.example:${good.port || 80}${p}/${b}/a/b.db`,
    `${scheme}//${good.hostname}:1${p}/${b}/a/b.db`,
    `${scheme === 'http:' ? 'https:' : 'http:'}//${host}${p}/${b}/a/b.db`,
    `${scheme}//${host}@evil.example${p}/${b}/a/b.db`,
    `${scheme}//user@${host}${p}/${b}/a/b.db`,
    `${scheme}//${host}\\@evil.example${p}/${b}/a/b.db`,
    `${scheme}//evil.example\\${host}${p}/${b}/a/b.db`,
    `${scheme}//${host}:${p}/${b}/a/b.db`,
    `${scheme}//${host}:99999${p}/${b}/a/b.db`,
    // other schemes and shapes
    `ftp://${host}${p}/${b}/a/b.db`,
    `file://${p}/${b}/a/b.db`,
    `//${host}${p}/${b}/a/b.db`,
    `${p}/${b}/a/b.db`,
    `${host}${p}/${b}/a/b.db`,
    `javascript:alert(1)//${host}${p}/${b}/a/b.db`,
    `s3://${b}/a/b.db`,
    '',
    `${o}`,
    `${o}/`,
    // other buckets and paths
    `${o}${p}/other/a/b.db`,
    `${o}${p}/${b}x/a/b.db`,
    `${o}${p}/${b}`,
    `${o}${p}/${b}/`,
    `${o}${p}/%63aptures/a/b.db`,
    `${o}${p}/${b.toUpperCase()}/a/b.db`,
    `${o}/x${p}/${b}/a/b.db`,
    ...(p ? [`${o}/${b}/a/b.db`] : []),
    // dot segments, empty segments, traversal through encodings
    `${o}${p}/${b}/a/../b.db`,
    `${o}${p}/${b}/../${b}/a/b.db`,
    `${o}${p}/${b}/./a/b.db`,
    `${o}${p}/${b}/a/b.db/..`,
    `${o}${p}/${b}/a/%2e%2e/b.db`,
    `${o}${p}/${b}/a/%2E%2E/b.db`,
    `${o}${p}/${b}/a/.%2e/b.db`,
    `${o}${p}/${b}/a/%2e/b.db`,
    `${o}${p}/${b}/a%2fb.db`,
    `${o}${p}/${b}/a%2F..%2Fb.db`,
    `${o}${p}/${b}/a/%2f/b.db`,
    `${o}${p}/${b}//a/b.db`,
    `${o}${p}/${b}/a//b.db`,
    `${o}${p}/${b}/a/b.db/`,
    `${o}${p}/${b}/a%5c..%5cb.db`.replace('a%5c..%5cb.db', 'a\\..\\b.db'),
    // NUL, controls, whitespace, malformed encodings, fragments
    `${o}${p}/${b}/a/b%00.db`,
    `${o}${p}/${b}/a/b\0.db`,
    `${o}${p}/${b}/a/b.db\r\nX-Injected: 1`,
    `${o}${p}/${b}/a/b .db`,
    ` ${o}${p}/${b}/a/b.db`,
    `${o}${p}/${b}/a/b\t.db`,
    `${o}${p}/${b}/a/%zz.db`,
    `${o}${p}/${b}/a/%e9.db`,
    `${o}${p}/${b}/a/%ed%a0%80.db`,
    `${o}${p}/${b}/a/b.db#frag`,
    `${o}${p}/${b}/a/ü.db`,
    `${o}${p}/${b}/${'x'.repeat(1025)}`,
    `${o}${p}/${b}/${'x/'.repeat(5000)}y`,
  ];
}

function accepted(s: ObjectStorage): Array<[string, string]> {
  const o = s.objectUrl('a/b.db').replace(/\/[^/]+\/a\/b\.db$/, ''); // origin + prefix
  const b = s.bucket;
  return [
    [s.objectUrl('a/b.db'), 'a/b.db'],
    [`${o}/${b}/a/b.db?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=00`, 'a/b.db'],
    [o.replace(/^http/, 'HTTP').replace(/\/\/[^/]+/, (m) => m.toUpperCase()) + `/${b}/a/b.db`, 'a/b.db'],
    [`${o}/${b}/rig-7/a%20b%20(1).db`, 'rig-7/a b (1).db'],
    [`${o}/${b}/x/%C3%BC%F0%9F%98%80.log`, 'x/ü😀.log'],
    [`${o}/${b}/percent%2520literal`, 'percent%20literal'],
    [`${o}/${b}/...`, '...'],
  ];
}

for (const [name, s] of [
  ['embedded', embedded],
  ['embedded with public_url https://gw.example.org/storage/', embeddedPrefixed],
  ['minio', minio],
] as const) {
  test(`${name}: our object URLs are accepted`, (t) => {
    for (const [url, key] of accepted(s)) {
      let got: unknown;
      try {
        got = s.parseObjectUrl(url);
      } catch (err) {
        got = (err as Error).message;
      }
      t.deepEqual(got, { bucket: s.bucket, key }, `${url} -> ${key}`);
    }
    t.end();
  });

  test(`${name}: everything else is refused with not_storage_url`, async (t) => {
    for (const url of hostile(s)) {
      const err = await caught(() => s.parseObjectUrl(url));
      t.deepEqual([err?.kind, err?.code], ['unprocessable', 'not_storage_url'], JSON.stringify(url.length > 120 ? url.slice(0, 100) + '...' : url));
    }
    for (const notString of [undefined, null, 42, {}, ['x']]) {
      const err = await caught(() => s.parseObjectUrl(notString as unknown as string));
      t.equal(err?.code, 'not_storage_url', `non-string ${JSON.stringify(notString)}`);
    }
  });
}

test('minio: both the public and the internal endpoint forms are ours, nothing else on those hosts', async (t) => {
  t.ok(minio.objectUrl('a/b.db').startsWith('http://vpn.rigs.internal:9000/captures/'), 'objectUrl uses the public endpoint');
  t.deepEqual(minio.parseObjectUrl('http://vpn.rigs.internal:9000/captures/a/b.db'), { bucket: 'captures', key: 'a/b.db' }, 'public form');
  t.deepEqual(minio.parseObjectUrl('http://127.0.0.1:9000/captures/a/b.db'), { bucket: 'captures', key: 'a/b.db' }, 'internal form');
  t.equal((await caught(() => minio.parseObjectUrl('http://vpn.rigs.internal:3000/captures/a/b.db')))?.code, 'not_storage_url', "rigd's own port is not MinIO");
  t.equal((await caught(() => minio.parseObjectUrl('http://127.0.0.1/captures/a/b.db')))?.code, 'not_storage_url', 'internal host, default port');
  t.equal((await caught(() => embedded.parseObjectUrl('http://vpn.rigs.internal:9000/captures/a/b.db')))?.code, 'not_storage_url', "MinIO's URL is not the embedded store's");
});
