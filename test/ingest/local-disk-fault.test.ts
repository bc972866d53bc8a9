// test: alone (a read-only tmpfs mounted)
// This node's own disk failing under its ingest temp copies (data_dir/ingest-tmp read-only or full)
// is this node's fault, not the capture's: the run does not use up an attempt, so the capture stays
// queued (another node, or this one once its disk is back, imports it) instead of failing for good.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import test from 'tape';
import { ingestTmpDir } from '../../src/ingest/capture-worker.ts';
import { openApp } from '../../src/services/app.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { waitFor } from '../helpers/jobs.ts';
import { writeCaptureFile } from '../helpers/seed-capture.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const mounted: string[] = [];
process.on('exit', () => {
  for (const dir of mounted) {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      // already gone
    }
  }
});

test('ingest-tmp read-only: the capture waits, queued, without using up its one attempt; imported once the disk is back', async (t) => {
  const config = testConfig({ ingest: { max_attempts: 1 } });
  const tmp = ingestTmpDir(config);
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m,mode=0700', 'tmpfs', tmp]);
  mounted.push(tmp);
  const app = await openApp(config);
  try {
    await app.start();
    const file = `${tmpDir()}/a.sqlite`;
    await writeCaptureFile(file, [{ name: 'frames', columns: [{ name: 'ts', type: 'TEXT' }], rows: [['2026-11-27T08:00:00Z'], ['2026-11-27T08:00:01Z']] }]);
    await putFile(app, 'rig1/a.sqlite', file);
    const { capture } = await app.captures.queueObject({ key: 'rig1/a.sqlite', url: app.storage.objectUrl('rig1/a.sqlite') });

    const tried = await waitFor(
      async () => {
        const c = await app.captures.get(capture.id);
        return c.last_error !== null || c.state === 'failed' ? c : null;
      },
      60_000,
      'the first run to end',
    );
    t.equal(tried.state, 'queued', `still queued after the run on a read-only ingest-tmp (${tried.state}: ${tried.last_error})`);
    t.equal(tried.attempts, 0, 'no attempt used up');
    t.match(String(tried.last_error), /read-only|EROFS/i, 'the error names the read-only disk');

    execFileSync('umount', [tmp]);
    mounted.splice(mounted.indexOf(tmp), 1);
    const done = await settled(app, capture.id, 120_000);
    t.equal(done.state, 'ingested', `ingested once the disk is back (${done.last_error ?? 'no error'})`);
  } finally {
    await app.close();
  }
});
