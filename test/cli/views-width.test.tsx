// The live views fit the terminal: at 80 columns no line is wider and the essential columns (ID,
// status, last seen / progress) are there; at 120 more columns appear; a resize from 120 to 80
// redraws the frame at the new width. Rendered with ink-testing-library, whose stdout is 100 wide
// unless a test sets `columns` (then emits 'resize', as a terminal does).
import test from 'tape';
import { render } from 'ink-testing-library';
import type { CaptureView } from '../../src/services/captures/service.ts';
import type { RigView } from '../../src/services/rigs/view.ts';
import type { UploadView } from '../../src/services/uploads/service.ts';
import { CapturesWatch } from '../../src/cli/views/captures-watch.tsx';
import { fitColumns, fitLayout, shorten } from '../../src/cli/views/columns.ts';
import { RigsWatch } from '../../src/cli/views/rigs-watch.tsx';
import { UploadsWatch } from '../../src/cli/views/uploads-watch.tsx';

const NOW = new Date('2026-11-23T08:00:00Z');
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');
const widest = (frame: string) => Math.max(...plain(frame).split('\n').map((l) => [...l].length));

type View = ReturnType<typeof render>;

/** The column header line of a frame. */
const headerOf = (frame: string) => frame.split('\n').find((l) => /^\s*(STATUS|ID)\s/.test(l)) ?? '';

/** Renders a view that is unmounted when the test ends, passed or not (it polls until then). */
function mount(t: test.Test, element: Parameters<typeof render>[0]): View {
  const view = render(element);
  t.teardown(() => view.unmount());
  return view;
}

/** Sets the test terminal's width and tells the view, as a terminal resize does. */
function resize(view: View, columns: number): void {
  Object.defineProperty(view.stdout, 'columns', { configurable: true, get: () => columns });
  view.stdout.emit('resize');
}

async function until(view: View, ok: (f: string) => boolean, what: string): Promise<string> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    const f = view.lastFrame();
    if (f !== undefined && ok(plain(f))) return plain(f);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no frame with ${what}; last frame:\n${view.lastFrame()}`);
}

function rig(id: string, agoS: number, extra: Partial<RigView> = {}): RigView {
  const status = agoS <= 300 ? 'online' : agoS <= 3600 ? 'stale' : 'offline';
  return {
    id, status, last_seen_at: new Date(NOW.getTime() - agoS * 1000), serial: `S-${id}`, lan_ip: '192.168.100.105', vpn_address: '10.144.180.3',
    vpn_name: `${id}.rigs.internal`, version: '2.0', branch: 'main', latitude: 52.52, longitude: 13.405,
    current_project: 'survey-7', created_at: NOW, ...extra,
  };
}

const RIGS = [rig('rig10', 10), rig('rig2', 1200, { branch: 'dev', version: '2.1-rc1' }), rig('rig1', 3 * 3600, { lan_ip: null, latitude: null, longitude: null })];

test('fitColumns: drops the highest priority number first, never a 0', (t) => {
  const rows = [['AAAA', 'BBBB', 'CCCC', 'DDDD'], ['a', 'b', 'c', 'd']];
  t.deepEqual(fitColumns(rows, [0, 2, 1, 2], 100), [0, 1, 2, 3], 'everything fits');
  t.deepEqual(fitColumns(rows, [0, 2, 1, 2], 16), [0, 1, 2], '22 cells in 16: the rightmost of the two 2s goes');
  t.deepEqual(fitColumns(rows, [0, 2, 1, 2], 10), [0, 2], 'then the other 2');
  t.deepEqual(fitColumns(rows, [0, 2, 0, 2], 3), [0, 2], 'essential columns stay even when they do not fit');
  t.end();
});

test('rigs --watch at 80 and 120 columns, and a resize from 120 to 80', async (t) => {
  const narrow = mount(t, <RigsWatch load={async () => RIGS} intervalMs={50} filter={{}} sort="id" colour={false} now={() => NOW} />);
  resize(narrow, 80);
  const at80 = await until(narrow, (f) => f.includes('rig10'), 'the rigs at 80');
  t.ok(widest(at80) <= 80, `80 columns: no line wider (widest ${widest(at80)})`);
  const header80 = headerOf(at80);
  t.match(header80, /^ {2}STATUS\s+ID\s+.*LAST SEEN/, 'header keeps STATUS, ID and LAST SEEN');
  t.notOk(/POSITION|LAN IP/.test(header80), 'position and LAN IP left out');
  t.match(at80, /● online\s+rig10\s.*less than a minute ago/, 'online rig: id, status, relative last seen');
  t.match(at80, /● stale\s+rig2\s.*20 minutes ago/, 'stale rig');
  t.match(at80, /● offline\s+rig1\s.*about 3 hours ago/, 'offline rig');
  narrow.unmount();

  const wide = mount(t, <RigsWatch load={async () => RIGS} intervalMs={50} filter={{}} sort="id" colour={false} now={() => NOW} />);
  resize(wide, 120);
  const at120 = await until(wide, (f) => f.includes('rig10'), 'the rigs at 120');
  t.ok(widest(at120) <= 120, `120 columns: no line wider (widest ${widest(at120)})`);
  const header120 = headerOf(at120);
  t.match(header120, /^ {2}STATUS\s+ID\s+LAN IP\s+VPN NAME\s+BRANCH \(VERSION\)\s+LAST SEEN/, 'more columns at 120');
  t.ok(header120.split(/\s{2,}/).length > header80.split(/\s{2,}/).length, `more columns than at 80 (${header120.trim()})`);
  t.match(at120, /192\.168\.100\.105/, 'the LAN IP shows');

  resize(wide, 80);
  // Ink redraws at once (cutting the old lines at 80), then the view re-renders with the columns of 80.
  const after = await until(wide, (f) => headerOf(f) === header80, 'the header of 80 columns after the resize');
  t.ok(widest(after) <= 80, `after the resize: no line wider than 80 (widest ${widest(after)})`);
  t.equal(after.split('\n').filter((l) => l.startsWith('●')).length, 3, 'each rig once: no stale lines');
  wide.unmount();
});

function upload(id: number, state: UploadView['state'], size: number, seen: number): UploadView {
  const at = new Date(NOW.getTime() - 120_000).toISOString();
  return { id, rig_id: 'rig10', key: `rig10/2026-11-23/capture-${id}.sqlite`, project: 'survey', state, size, bytes_seen: seen, etag: null, created_at: at, url_expires_at: at, completed_at: null };
}

function capture(id: number, state: CaptureView['state'], progress: CaptureView['progress']): CaptureView {
  const at = new Date(NOW.getTime() - 60_000).toISOString();
  return {
    id, bucket: 'captures', key: `rig10/2026-11-23/capture-${id}.sqlite`, url: '', etag: 'e', size: 4096, rig_id: 'rig10', project: 'survey-harbour-7', upload_id: null,
    job_id: 1, state, attempts: 1, error_code: null, last_error: null, progress, sha256: null, tables: null, page_size: null, page_count: null,
    created_at: at, updated_at: at, started_at: at, finished_at: null,
  };
}

test('uploads and captures --watch at 80 and 120 columns', async (t) => {
  const uploads = [upload(12, 'reserved', 1024 * 1024, 256 * 1024), upload(11, 'uploaded', 2048, 2048)];
  const captures = [capture(7, 'ingesting', { step: 'download', bytes: 1024, total: 4096 }), capture(6, 'queued', null)];
  for (const [name, make, essential, extra] of [
    ['uploads', () => <UploadsWatch load={async () => uploads} intervalMs={50} colour={false} now={() => NOW} />, /^ID\s+STATE\s.*PROGRESS/, /RESERVED/],
    ['captures', () => <CapturesWatch load={async () => captures} intervalMs={50} colour={false} now={() => NOW} />, /^ID\s+STATE\s.*PROGRESS \/ RESULT/, /UPDATED/],
  ] as const) {
    const narrow = mount(t, make());
    resize(narrow, 80);
    const at80 = await until(narrow, (f) => f.includes('25%'), `${name} at 80`);
    t.ok(widest(at80) <= 80, `${name} at 80: no line wider (widest ${widest(at80)})`);
    t.match(headerOf(at80), essential, `${name} at 80: id, state and progress`);
    t.match(at80, /25%/, `${name} at 80: the progress bar`);
    narrow.unmount();

    const wide = mount(t, make());
    resize(wide, 120);
    const at120 = await until(wide, (f) => f.includes('25%'), `${name} at 120`);
    t.ok(widest(at120) <= 120, `${name} at 120: no line wider`);
    t.match(headerOf(at120), extra, `${name} at 120: more columns (${headerOf(at120)})`);
    t.match(at120, /(2|1) minutes? ago/, `${name} at 120: relative times`);
    resize(wide, 80);
    const after = await until(wide, (f) => headerOf(f) === headerOf(at80), `${name} redrawn with the columns of 80`);
    t.ok(widest(after) <= 80, `${name}: after the resize, no line wider than 80`);
    wide.unmount();
  }
});

test('rigs --watch draws only the rows a terminal of 12 lines shows, and says how many more there are', async (t) => {
  const many = Array.from({ length: 40 }, (_, i) => rig(`rig${i + 1}`, 10));
  const view = mount(t, <RigsWatch load={async () => many} intervalMs={50} filter={{}} sort="id" colour={false} now={() => NOW} />);
  const all = await until(view, (f) => f.includes('rig40'), 'all 40 rigs when the output has no height');
  t.equal(all.split('\n').filter((l) => l.startsWith('●')).length, 40, 'no height known: every rig drawn');
  Object.defineProperty(view.stdout, 'rows', { configurable: true, get: () => 12 });
  view.stdout.emit('resize');
  const frame = await until(view, (f) => f.includes('more'), 'the "more" line');
  const rows = frame.split('\n').filter((l) => l.startsWith('●'));
  t.equal(rows.length, 5, '12 lines: 5 rig rows (summary, header, footer and blank lines take the rest)');
  t.ok(rows[0].includes('rig1 '), 'the first rigs in order');
  t.ok(frame.includes('… 35 more'), 'the hidden rigs counted');
  t.ok(frame.split('\n').length <= 12, `the frame fits the 12 lines (${frame.split('\n').length})`);
});

test('fitLayout: long cells are shortened before any column is dropped; floors and headers are kept', (t) => {
  const rows = [['ID', 'BRANCH', 'SEEN'], ['r1', 'x'.repeat(60), '5 minutes ago']];
  const all = fitLayout(rows, [0, 1, 0], 40, [undefined, undefined, Infinity]);
  t.deepEqual(all.keep, [0, 1, 2], '40 cells: every column, the branch shortened');
  t.equal(all.widths[1], 40 - 2 - 13 - 4, 'the branch takes what is left');
  t.equal(all.widths[2], 13, 'a column with an Infinity floor is never shortened');
  const narrow = fitLayout(rows, [0, 1, 0], 20, [undefined, undefined, Infinity]);
  t.deepEqual(narrow.keep, [0, 2], 'even shortened to its floor the branch does not fit 20: dropped');
  t.equal(shorten('feature/abc', 8), 'feature…', 'a shortened cell ends in …');
  t.equal(shorten('main', 8), 'main', 'a short cell is untouched');
  t.end();
});

const LONG_BRANCH = 'feature/very-long-branch-name-that-goes-on-and-on-and-on-xyz'; // 60 characters

test('rigs --watch with a 60-character branch at 80, 120 and 160 columns: shortened, every column kept where it fits', async (t) => {
  const rigs = [...RIGS, rig('rig3', 30, { branch: LONG_BRANCH })];
  let shownBefore = 0;
  for (const columns of [80, 120, 160]) {
    const view = mount(t, <RigsWatch load={async () => rigs} intervalMs={50} filter={{}} sort="id" colour={false} now={() => NOW} />);
    resize(view, columns);
    const frame = await until(view, (f) => f.includes('rig3') && widest(f) <= columns, `the rigs at ${columns}`);
    t.ok(widest(frame) <= columns, `${columns} columns: no line wider (widest ${widest(frame)})`);
    const header = headerOf(frame);
    t.match(header, /STATUS\s+ID\s.*BRANCH \(VERSION\)\s+LAST SEEN/, `${columns}: status, id, branch and last seen (${header.trim()})`);
    if (columns >= 120) t.match(header, /^ {2}STATUS\s+ID\s+LAN IP\s+VPN NAME\s+BRANCH \(VERSION\)\s+LAST SEEN\s+POSITION\s+PROJECT$/, `${columns}: every column`);
    const long = frame.split('\n').find((l) => l.includes('rig3 ')) ?? '';
    t.match(long, /feature\/very-lo[^ ]*…/, `${columns}: the long branch shortened with …`);
    const shown = /(feature\/[^ ]*)…/.exec(long)?.[1].length ?? 0;
    t.ok(shown > shownBefore, `${columns}: more of it shows than in fewer columns (${shown} characters)`);
    shownBefore = shown;
    t.match(frame, /● stale\s+rig2\s.*dev \(2\.1-rc1\)/, `${columns}: the other rigs' branch and version whole`);
    view.unmount();
  }
});

test('captures --watch at 120 columns keeps KEY and RIG beside a long result', async (t) => {
  const long = capture(9, 'ingested', null);
  long.key = `rig10/2026-11-23/${'long-capture-name-'.repeat(3)}9.sqlite`;
  long.tables = ['readings', 'events', 'frames', 'notes'].map((name) => ({ name, columns: [], rows: 120000, time_column: 'at', first: '2026-11-23T07:41:08.000Z', last: '2026-11-23T09:02:11.000Z' }));
  const captures = [long, capture(7, 'ingesting', { step: 'download', bytes: 1024, total: 4096 })];
  for (const columns of [80, 120, 160]) {
    const view = mount(t, <CapturesWatch load={async () => captures} intervalMs={50} colour={false} now={() => NOW} />);
    resize(view, columns);
    const frame = await until(view, (f) => f.includes('25%') && widest(f) <= columns, `captures at ${columns}`);
    t.ok(widest(frame) <= columns, `${columns}: no line wider (widest ${widest(frame)})`);
    const header = headerOf(frame);
    if (columns >= 120) {
      t.match(header, /^ID\s+STATE\s+RIG\s+PROJECT\s+KEY\s+PROGRESS \/ RESULT\s+UPDATED$/, `${columns}: every column, KEY and RIG included`);
      t.match(frame, /^9\s+ingested\s+rig10\s+survey-harbour-7\s+rig10\/2026-11-23\//m, `${columns}: the capture's rig and key`);
    } else t.match(header, /^ID\s+STATE\s.*PROGRESS \/ RESULT/, `${columns}: id, state and progress`);
    t.match(frame, /readings 120000 rows/, `${columns}: the result, shortened where it must be`);
    t.match(frame, /25%/, `${columns}: the progress bar whole`);
    view.unmount();
  }
});
