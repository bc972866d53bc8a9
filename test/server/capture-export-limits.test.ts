// Exports running at once are capped per user (captures.export_max_per_user) and in total
// (captures.export_max_concurrent): beyond either, 429 too_many_exports with Retry-After and a JSON
// body saying which cap, before the store is opened. A client that goes away gives its slot and its
// store handle back at once; refused requests hold neither.
import test from 'tape';
import { request, type Dispatcher } from 'undici';
import { settledStoreHandles, storeHandles } from '../helpers/capture-store.ts';
import { waitFor } from '../helpers/jobs.ts';
import { seedCapture } from '../helpers/seed-capture.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const files = tmpDir();
let s: TestServer;
let id = 0;
const tokens: Record<string, string> = {};

const open = (who: string) => request(`${s.url}/api/v1/captures/${id}/tables/long`, { headers: { authorization: tokens[who]! } });

/**
 * Store handles once no export runs, after two exports ran at once. On SQLite the store file's
 * descriptors of closed connections stay open (and are reused by the next ones) while another
 * connection of this process, the capture worker's writer, holds its shared lock on the file: as
 * many as the connections exports share. A connection left open adds its own on top of those.
 */
async function idleHandles(): Promise<number> {
  return settledStoreHandles(s.config.data_dir);
}

async function refused(t: test.Test, res: Dispatcher.ResponseData, cap: RegExp): Promise<void> {
  t.equal(res.statusCode, 429, '429');
  t.equal(res.headers['retry-after'], '5', 'Retry-After: 5');
  t.match(String(res.headers['content-type']), /^application\/json/, 'a JSON body');
  const body = (await res.body.json()) as { success: boolean; error: { code: string; message: string } };
  t.deepEqual([body.success, body.error.code], [false, 'too_many_exports'], 'code too_many_exports');
  t.match(body.error.message, cap, 'names the cap');
}

test('setup: at most 2 exports at once, 1 per user; a table far larger than socket buffers', async (t) => {
  s = await startServer({ captures: { export_max_concurrent: 2, export_max_per_user: 1 } });
  for (const who of ['ana', 'bo', 'cy']) tokens[who] = (await userWithToken(s, who)).token;
  const rows = Array.from({ length: 60_000 }, (_, i) => [i, 'y'.repeat(300)]);
  id = await seedCapture(s.app, files, 'rig1/long.sqlite', [{ name: 'long', columns: [{ name: 'i', type: 'INTEGER' }, { name: 's', type: 'TEXT' }], rows }]);
  t.ok(id > 0);
});

test('per user, then in total: 429 with Retry-After; a client gone frees its slot and store handle', async (t) => {
  await Promise.all([open('ana'), open('bo')].map(async (res) => (await res).body.dump()));
  const before = await idleHandles();
  const a1 = await open('ana');
  t.equal(a1.statusCode, 200, "ana's first export runs (not read: it waits on the socket)");
  await refused(t, await open('ana'), /export_max_per_user is 1/);
  const b1 = await open('bo');
  t.equal(b1.statusCode, 200, "bo's export runs");
  await refused(t, await open('cy'), /export_max_concurrent is 2/);
  t.ok((await storeHandles(s.config.data_dir)) > before, 'the two running exports hold the store');

  a1.body.destroy();
  const c1 = await waitFor(async () => {
    const res = await open('cy');
    if (res.statusCode === 200) return res;
    await res.body.dump();
    return null;
  }, 60_000, "ana's slot to be given back");
  t.equal(c1.statusCode, 200, "once ana's client is gone, cy's export runs");
  const text = await c1.body.text();
  t.equal(text.split('\r\n').length, 60_002, 'and arrives whole');
  b1.body.destroy();
  // The server notices the client gone, then closes the handle: on a busy machine that can take
  // longer than settledStoreHandles' 400 ms of a held count. Wait (60 s at most) for the count
  // before; a handle left open keeps it above.
  await waitFor(async () => (await storeHandles(s.config.data_dir)) <= before, 60_000, `store handles back to ${before}`).catch(() => undefined);
  t.equal(await idleHandles(), before, 'no store handle left once the clients are gone');
  const again = await open('ana');
  t.equal(again.statusCode, 200, 'every slot free again');
  await again.body.dump();
});

test('teardown', async () => {
  await s.close();
});
