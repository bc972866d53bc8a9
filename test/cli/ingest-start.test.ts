// `rigd ingest` opens only what queueing a capture needs: the database, the storage driver and the
// capture service; none of the app's other services and their modules (notifications with nodemailer
// and undici, the ingest worker and the PostgreSQL capture store, alerts) loads, nor what only the
// other capture commands or rigd serve use (the ingester, the logger's pino, date-fns). The modules a real
// `rigd ingest` process resolves are recorded by a module hook given in NODE_OPTIONS.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'tape';
import { makeCapture } from '../helpers/capture-files.ts';
import { rigd } from '../helpers/cli.ts';
import { put } from '../helpers/data-dir-captures.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('rigd ingest queues the capture without loading the services it does not use', async (t) => {
  const dataDir = tmpDir();
  const work = tmpDir('rigd-ingest-start-');
  const cap = await makeCapture(path.join(work, 'a.sqlite'));
  await put(dataDir, 'rig1/a.sqlite', cap.path);
  const log = path.join(work, 'modules.txt');
  const hook = path.join(work, 'hook.mjs');
  const register = path.join(work, 'register.mjs');
  writeFileSync(log, '');
  writeFileSync(
    hook,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}
`,
  );
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  const res = await rigd(['ingest', 'rig1/a.sqlite', '--json'], { env: { RIGD_DATA_DIR: dataDir, NODE_OPTIONS: `--import=${pathToFileURL(register).href}` } });
  t.equal(res.code, 0, `queued (${res.stderr.trim()})`);
  t.equal((JSON.parse(res.stdout) as { state: string }).state, 'queued', 'the capture is queued');
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  t.ok(loaded.some((u) => u.endsWith('/services/captures/service.js')), `the capture service loaded (${loaded.length} modules recorded)`);
  for (const [what, pattern] of [
    ['the whole app (services/app.js)', /\/services\/app\.js$/],
    ['the ingest worker', /\/ingest\/capture-worker\.js$/],
    ['the PostgreSQL capture store', /\/capture-store\/postgres-writer\.js$|\/node_modules\/pg-copy-streams\//],
    ['notifications (nodemailer, undici)', /\/node_modules\/(nodemailer|undici)\//],
    ['alerts', /\/services\/alerts\//],
    ['the ingester', /\/ingest\/ingester\.js$/],
    ['the logger (pino)', /\/node_modules\/pino\//],
    ['date-fns (the listings\' time-ago)', /\/node_modules\/date-fns\//],
  ] as const) {
    const hit = loaded.find((u) => pattern.test(u));
    t.equal(hit, undefined, `not loaded: ${what}`);
  }
});
