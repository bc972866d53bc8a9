// The storage contract suite against the embedded store. Its HTTP route is built elsewhere; here a
// presigned PUT/GET goes through the same steps the route takes: verifySignedRequest, then putObject/read.
import { EmbeddedStorage } from '../../src/storage/embedded.ts';
import { bodyStream, runContractSuite } from '../helpers/storage-contract.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';

function target(url: string, storage: EmbeddedStorage) {
  const u = new URL(url);
  const [, bucket, ...rest] = u.pathname.split('/');
  const key = rest.map(decodeURIComponent).join('/');
  return { bucket: bucket!, key, query: u.searchParams, host: u.host, storage };
}

runContractSuite('embedded', async () => {
  const tmp = tempDir();
  const storage = new EmbeddedStorage(testConfig({ data_dir: tmp.dir }));
  return {
    storage,
    credentials: storage.credentials,
    parentAndChild: true,
    longSegments: true,
    etagAlgorithm: 'sha256',
    async upload(url, body) {
      const r = target(url, storage);
      storage.verifySignedRequest({ method: 'PUT', ...r });
      await storage.putObject(r.key, bodyStream(body), { expectedSize: body.length });
    },
    async download(url) {
      const r = target(url, storage);
      storage.verifySignedRequest({ method: 'GET', ...r });
      const parts: Buffer[] = [];
      for await (const c of await storage.read(r.key)) parts.push(c as Buffer);
      return Buffer.concat(parts);
    },
    async close() {
      tmp.cleanup();
    },
  };
});
