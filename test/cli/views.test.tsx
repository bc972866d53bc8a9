// The Ink views, rendered with ink-testing-library: rows, colours on and off, a rig appearing between
// two frames, progress bars advancing.
import test from 'tape';
import chalk from 'chalk';
import { render } from 'ink-testing-library';
import type { CaptureView } from '../../src/services/captures/service.ts';
import type { RigView } from '../../src/services/rigs/view.ts';
import type { UploadView } from '../../src/services/uploads/service.ts';
import { CapturesWatch } from '../../src/cli/views/captures-watch.tsx';
import { colourEnabled } from '../../src/cli/views/colour.ts';
import { IngestWait } from '../../src/cli/views/ingest-wait.tsx';
import { progressBar } from '../../src/cli/views/progress-bar.ts';
import { RigsWatch } from '../../src/cli/views/rigs-watch.tsx';
import { UploadsWatch } from '../../src/cli/views/uploads-watch.tsx';

// The test runner sets FORCE_COLOR=0; the colour cases switch chalk (Ink's styler) on themselves.
chalk.level = 1;
const ESC = '\u001b[';
const NOW = new Date('2026-11-22T12:00:00Z');

function rig(id: string, agoS: number, extra: Partial<RigView> = {}): RigView {
  const status = agoS <= 300 ? 'online' : agoS <= 3600 ? 'stale' : 'offline';
  return {
    id,
    status,
    last_seen_at: new Date(NOW.getTime() - agoS * 1000),
    serial: `S-${id}`,
    lan_ip: '192.168.5.5',
    vpn_address: '10.144.3.3',
    vpn_name: `${id}.rigs.internal`,
    version: '2.0',
    branch: 'main',
    latitude: 52.52,
    longitude: 13.405,
    current_project: null,
    created_at: NOW,
    ...extra,
  };
}

async function until(frame: () => string | undefined, ok: (f: string) => boolean, what: string, ms = 60_000): Promise<string> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const f = frame();
    if (f !== undefined && ok(f)) return f;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no frame with ${what}; last frame:\n${frame()}`);
}

const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

test('rigs --watch view: rows, summary, colours, NO_COLOR, a rig appearing', async (t) => {
  let rigs = [rig('rig10', 10, { current_project: 'survey-7' }), rig('rig2', 1200, { branch: 'dev', version: '2.1-rc1' }), rig('rig1', 3 * 3600, { lan_ip: null, latitude: null, longitude: null })];
  const load = async () => rigs;
  const view = render(<RigsWatch load={load} intervalMs={30} filter={{}} sort="id" colour now={() => NOW} />);
  const first = await until(view.lastFrame, (f) => f.includes('rig10'), 'the rigs');
  const lines = plain(first).split('\n');
  t.equal(lines[0], '3 rigs: 1 online, 1 stale, 1 offline · versions: main 2.0 ×2, dev 2.1-rc1 ×1', 'summary line: statuses and versions');
  // ink-testing-library's terminal is 100 columns: the columns that do not fit (position, then LAN IP)
  // are left out (test/cli/views-width.test.tsx shows 80 and 120 columns).
  t.match(lines[2], /^ {2}STATUS\s+ID\s+LAN IP\s+VPN NAME\s+BRANCH \(VERSION\)\s+LAST SEEN\s+PROJECT$/, 'header');
  t.match(lines[3], /^● online\s+rig10\s+192\.168\.5\.5\s+rig10\.rigs\.intern…\s+main \(2\.0\)\s+less than a minute ago\s+survey-7$/, 'online rig row in 100: the VPN name shortened so that LAN IP fits');
  t.equal(lines.filter((l) => l.startsWith('●')).length, 3, 'one line per rig');
  t.match(lines[4], /^● stale\s+rig2\s+.*dev \(2\.1-rc1\)\s+20 minutes ago/, 'stale rig row');
  t.match(lines[5], /^● offline\s+rig1\s+-\s+rig1\.rigs\.internal\s+main \(2\.0\)\s+about 3 hours ago$/, 'offline rig: no LAN IP, no project');
  t.ok(first.includes(`${ESC}32m●`), 'online dot is green');
  t.ok(first.includes(`${ESC}33m●`), 'stale dot is amber');
  t.ok(first.includes(`${ESC}90m●`), 'offline dot is grey');

  rigs = [...rigs, rig('rig3', 5, { branch: 'main' })];
  const second = plain(await until(view.lastFrame, (f) => f.includes('rig3'), 'the new rig'));
  t.ok(second.startsWith('4 rigs: 2 online'), 'summary counts the new rig');
  t.deepEqual(
    second.split('\n').filter((l) => l.startsWith('●')).map((l) => l.split(/\s+/)[2]),
    ['rig10', 'rig2', 'rig1', 'rig3'],
    'the new rig is a new row between two frames (service order kept)',
  );
  view.unmount();

  const sorted = render(<RigsWatch load={load} intervalMs={1000} filter={{ branch: 'main' }} sort="last-seen" colour={false} now={() => NOW} />);
  const frame = await until(sorted.lastFrame, (f) => f.includes('rig10'), 'rigs');
  t.notOk(frame.includes(ESC), 'colour off (NO_COLOR): not one escape code');
  t.deepEqual(
    frame.split('\n').filter((l) => l.startsWith('●')).map((l) => l.split(/\s+/)[2]),
    ['rig3', 'rig10', 'rig1'],
    '--branch main and --sort last-seen',
  );
  t.match(frame, /sorted by last seen · branch main/, 'footer says the order and filter');
  sorted.unmount();

  t.equal(colourEnabled({ NO_COLOR: '1' }), false, 'NO_COLOR=1: no colour');
  t.equal(colourEnabled({ NO_COLOR: '' }), true, 'NO_COLOR empty: colour (no-color.org)');
  t.equal(colourEnabled({}), true, 'default: colour');
});

function upload(id: number, state: UploadView['state'], size: number, seen: number): UploadView {
  const at = NOW.toISOString();
  return { id, rig_id: 'rig1', key: `rig1/cap-${id}.sqlite`, project: null, state, size, bytes_seen: seen, etag: null, created_at: at, url_expires_at: at, completed_at: null };
}

test('uploads --watch view: a progress bar per upload, advancing', async (t) => {
  let seen = 256 * 1024;
  const load = async () => [upload(2, 'reserved', 1024 * 1024, seen), upload(1, 'uploaded', 2048, 2048)];
  const view = render(<UploadsWatch load={load} intervalMs={20} colour={false} />);
  const first = await until(view.lastFrame, (f) => f.includes('cap-2'), 'the uploads');
  t.ok(first.includes(`${progressBar(1, 4)}  256.0 KiB / 1.0 MiB`), 'in flight: 25 % bar with bytes seen / size');
  t.ok(first.includes(`${progressBar(1, 1)}  2.0 KiB`), 'uploaded: full bar');
  t.match(first, /2 recent uploads: 1 reserved, 1 uploaded, 0 expired · 1 receiving bytes/, 'summary by state');
  seen = 768 * 1024;
  const later = await until(view.lastFrame, (f) => f.includes('768.0 KiB'), 'more bytes');
  t.ok(later.includes(progressBar(3, 4)), 'the bar advanced to 75 %');
  t.ok(progressBar(3, 4).startsWith('███████████████░░░░░'), 'bar drawing: 15 of 20 cells');
  t.notOk(later.includes(ESC), 'no escape codes with colour off');
  view.unmount();
});

function capture(state: CaptureView['state'], progress: CaptureView['progress'], extra: Partial<CaptureView> = {}): CaptureView {
  const at = NOW.toISOString();
  return {
    id: 7, bucket: 'captures', key: 'rig1/a.sqlite', url: '', etag: 'e', size: 4096, rig_id: 'rig1', project: 'p', upload_id: null, job_id: 1,
    state, attempts: 1, error_code: null, last_error: null, progress, sha256: null, tables: null, page_size: null, page_count: null,
    created_at: at, updated_at: at, started_at: at, finished_at: null, ...extra,
  };
}

test('captures --watch and ingest --wait views: download bar advancing, then the result', async (t) => {
  let c = capture('ingesting', { step: 'download', bytes: 1024, total: 4096 });
  const load = async () => [c];
  const view = render(<CapturesWatch load={load} intervalMs={20} colour={false} />);
  const first = await until(view.lastFrame, (f) => f.includes('a.sqlite'), 'the capture');
  t.ok(first.includes(progressBar(1, 4)), 'download at 25 %');
  c = capture('ingesting', { step: 'download', bytes: 4096, total: 4096 });
  await until(view.lastFrame, (f) => f.includes(progressBar(1, 1)), 'download at 100 %');
  t.pass('the download bar advanced');
  // The result is long: at 160 columns it shows whole (at 100 it is shortened with "…").
  Object.defineProperty(view.stdout, 'columns', { configurable: true, get: () => 160 });
  view.stdout.emit('resize');
  c = capture('ingested', null, {
    tables: [
      { name: 'fixes', columns: [], rows: 12, time_column: 'at', first: '2026-11-23T07:41:08.000Z', last: '2026-11-23T09:02:11.000Z' },
      { name: 'notes', columns: [], rows: 3, time_column: null, first: null, last: null },
    ],
  });
  await until(view.lastFrame, (f) => f.includes('fixes 12 rows (2026-11-23 07:41..09:02Z); notes 3 rows'), 'the result');
  t.pass('ingested: each table with its rows and, where it has one, its time span');
  view.unmount();

  let step = 0;
  const states = [capture('queued', null), capture('ingesting', { step: 'download', bytes: 2048, total: 4096 }), capture('ingested', null, { tables: [] })];
  let done: CaptureView | undefined;
  const wait = render(<IngestWait load={async () => states[Math.min(step++, 2)]} intervalMs={20} colour={false} onDone={(x) => (done = x)} />);
  // The view exits once the capture is ingested, and Ink may clear the last frame then: look at every frame.
  await until(() => wait.frames.find((f) => f.includes('ingested')), () => true, 'the end');
  await until(() => done?.state, (x) => x === 'ingested', 'onDone');
  t.equal(done?.state, 'ingested', 'onDone with the final capture');
  t.ok(wait.frames.some((f) => f.includes('download') || f.includes('2.0 KiB / 4.0 KiB')), 'a progress frame on the way');
  wait.unmount();
});

test('data with ESC, BEL, CR and bidi overrides is shown escaped in every view, never raw', async (t) => {
  const nasty = '\u001b[31mred\u0007\rX\u202e';
  const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
  const rigs = [rig('rig1', 10, { branch: `main${nasty}`, version: `2.0${nasty}`, current_project: `p${nasty}`, serial: `S${nasty}` })];
  const rv = render(<RigsWatch load={async () => rigs} intervalMs={1000} filter={{}} sort="id" colour={false} now={() => NOW} />);
  const rf = await until(rv.lastFrame, (f) => f.includes('rig1'), 'the rig');
  t.notOk(raw.test(rf), 'rigs view: no raw control character (ESC, BEL, CR, bidi)');
  t.ok(rf.includes('main\\x1b[31mred\\x07\\x0dX\\u202e'), 'the branch is shown with its control characters escaped');
  rv.unmount();

  const up = { ...upload(3, 'reserved', 10, 0), key: `rig1/${nasty}.sqlite`, rig_id: `rig${nasty}` };
  const uv = render(<UploadsWatch load={async () => [up]} intervalMs={1000} colour={false} />);
  const uf = await until(uv.lastFrame, (f) => f.includes('rig1/'), 'the upload');
  t.notOk(raw.test(uf), 'uploads view: no raw control character');
  t.ok(uf.includes('rig1/\\x1b[31mred'), 'the key is shown escaped');
  uv.unmount();

  const failed = capture('failed', null, { key: `rig1/${nasty}.sqlite`, error_code: 'not_sqlite', last_error: `bad header ${nasty}` });
  const cv = render(<CapturesWatch load={async () => [failed]} intervalMs={1000} colour={false} />);
  // At 160 columns the key and the error text show whole.
  Object.defineProperty(cv.stdout, 'columns', { configurable: true, get: () => 160 });
  cv.stdout.emit('resize');
  const cf = await until(cv.lastFrame, (f) => f.includes('bad header'), 'the capture');
  t.notOk(raw.test(cf), 'captures view: no raw control character');
  t.ok(cf.includes('bad header \\x1b[31mred'), 'the error is shown escaped');
  cv.unmount();

  const iw = render(<IngestWait load={async () => failed} intervalMs={1000} colour={false} onDone={() => undefined} />);
  await until(() => iw.frames.find((f) => f.includes('rig1/')), () => true, 'the capture');
  t.notOk(iw.frames.some((f) => raw.test(f)), 'ingest --wait view: no raw control character in any frame');
  iw.unmount();

  const coloured = render(<RigsWatch load={async () => rigs} intervalMs={1000} filter={{}} sort="id" colour now={() => NOW} />);
  const colouredFrame = await until(coloured.lastFrame, (f) => f.includes('rig1'), 'the rig');
  t.notOk(colouredFrame.includes(`${ESC}31m`), 'colour on: the only escape codes are the view\'s own (no red from the data)');
  coloured.unmount();
});
