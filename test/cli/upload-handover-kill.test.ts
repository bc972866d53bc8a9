// kill -9 of `rigd serve` between an upload's two steps: the upload is stored (its transaction
// committed) but its capture never made (the next transaction). The process is stopped exactly
// there by the test-only stop point (RIGD_TEST_STOP_AT, inert without it) and killed. At the next
// start the stored upload is handed over: its capture is made once, queued and ingested, and the
// rig's earlier report is still there.
import path from 'node:path';
import test from 'tape';
import { makeCapture } from '../helpers/capture-files.ts';
import { rigd } from '../helpers/cli.ts';
import { freePort, serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { createHosts } from '../helpers/netns.ts';
import { tmpDir } from '../helpers/tmp.ts';

const RIG = { name: 'rig', addr: '10.144.152.2', gw: '10.144.152.1' };
const KEY = 'hand-rig/over.sqlite';


interface CaptureView {
  id: number;
  key: string;
  state: string;
}

test('kill -9 between an upload stored and its capture made: the next start hands it over, one capture, ingested', async (t) => {
  const dataDir = tmpDir();
  const port = await freePort();
  const base = `http://${RIG.gw}:${port}`;
  const env = { RIGD_DATA_DIR: dataDir, RIGD_STORAGE_PUBLIC_URL: base, RIGD_LOG_LEVEL: 'info' };
  const args = ['--port', String(port), '--host', '0.0.0.0'];
  const file = path.join(tmpDir(), 'over.sqlite');
  const made = await makeCapture(file, { tables: [{ name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }], rows: 500 }] });
  const hosts = await createHosts([RIG]);
  let first: ServeProcess | undefined;
  let second: ServeProcess | undefined;
  try {
    first = await serveProcess({ ...env, RIGD_TEST_STOP_AT: 'upload-handover' }, args);
    const report = await hosts.request('rig', {
      url: `${base}/api/v1/rigs/hand-rig`,
      method: 'PUT',
      headers: { host: `${RIG.gw}:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'rig_serial=SN-H&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main',
    });
    t.equal(report.status, 200, 'the rig reported (acknowledged)');
    const size = made.sizeBytes;
    const reserved = await hosts.request('rig', { url: `${base}/api/v1/rigs/upload?key=${encodeURIComponent(KEY)}&size=${size}`, headers: { host: `${RIG.gw}:${port}` } });
    t.equal(reserved.status, 200, `upload reserved ${reserved.body.slice(0, 200)}`);
    const { url } = JSON.parse(reserved.body) as { url: string };
    // The PUT stays open: the server stops itself after storing the upload, before it answers.
    const put = hosts.curl('rig', ['--max-time', '120', '-X', 'PUT', '-T', file, url], { timeoutMs: 130_000 });
    await waitFor(async () => first!.output().includes('rigd: stopped at upload-handover'), 60_000, 'the server to stop between the two steps', 50);
    t.equal(await first.stop('SIGKILL'), null, 'killed -9 between the upload stored and its capture made');
    first = undefined;
    const answered = await put;
    t.notEqual(answered.status, 200, `the PUT was never acknowledged (curl: ${answered.status} ${answered.stderr.trim().slice(0, 100)})`);

    const uploads = JSON.parse((await rigd(['uploads', '--json'], { env })).stdout) as { key: string; state: string }[];
    t.deepEqual(uploads.map((u) => [u.key, u.state]), [[KEY, 'uploaded']], 'the upload is stored as uploaded');
    const before = JSON.parse((await rigd(['captures', '--json'], { env })).stdout) as CaptureView[];
    t.deepEqual(before, [], 'and no capture was made for it');

    second = await serveProcess(env, args);
    const settled = await waitFor(
      async () => {
        const list = JSON.parse((await rigd(['captures', '--json'], { env })).stdout) as CaptureView[];
        return list.length > 0 && list.every((c) => c.state === 'ingested' || c.state === 'failed') ? list : null;
      },
      120_000,
      'the handed-over capture to be ingested',
      250,
    );
    t.deepEqual(settled.map((c) => [c.key, c.state]), [[KEY, 'ingested']], 'one capture of the upload, ingested after the restart');
    t.match(second.output(), /an upload stored before a restart had no capture; handing it over now/, 'the hand-over at start is logged');
    const health = await http(`${second.url}/healthz`);
    t.equal(health.status, 200, '/healthz 200 after the restart');
    const history = JSON.parse((await rigd(['rigs', 'history', 'hand-rig', '--json'], { env })).stdout) as unknown[];
    t.equal(history.length, 1, 'the acknowledged report is still there, once');

    // A second restart hands nothing over again (the capture exists): still one capture.
    t.equal(await second.stop('SIGTERM'), 0, 'stopped cleanly');
    second = await serveProcess(env, args);
    const again = JSON.parse((await rigd(['captures', '--json'], { env })).stdout) as CaptureView[];
    t.equal(again.length, 1, 'one capture after another restart');
    t.doesNotMatch(second.output(), /handing it over now/, 'nothing handed over twice');
  } finally {
    if (first) await first.stop('SIGKILL');
    if (second) await second.stop('SIGTERM');
    await hosts.destroy();
  }
});
