// `rigd rigs --watch` (Ink, rendered with ink-testing-library) at 80 columns with rigs whose branch
// and version are CJK and emoji: no line of the frame is wider than the terminal (measured in
// cells), each rig stays on its one line, and the last-seen column is shown for every rig.
import test from 'tape';
import stringWidth from 'string-width';
import { render } from 'ink-testing-library';
import type { RigView } from '../../src/services/rigs/view.ts';
import { RigsWatch } from '../../src/cli/views/rigs-watch.tsx';

const NOW = new Date('2026-11-23T08:00:00Z');
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

function rig(id: string, extra: Partial<RigView> = {}): RigView {
  return {
    id, status: 'online', last_seen_at: new Date(NOW.getTime() - 10_000), serial: `S-${id}`, lan_ip: '192.168.100.105', vpn_address: '10.144.203.3',
    vpn_name: `${id}.rigs.internal`, version: '2.0', branch: 'main', latitude: 52.52, longitude: 13.405, current_project: 'survey-7', created_at: NOW, ...extra,
  };
}

const RIGS = [rig('rig-a'), rig('rig-b', { branch: '日本語のブランチ日本語のブランチ日本語のブランチ', version: '🚀🚀🚀🚀🚀🚀🚀🚀' }), rig('rig-c', { branch: 'cafe\u0301'.repeat(20) })];

test('rigd rigs --watch at 80 columns: wide text never makes a line wider than the terminal', async (t) => {
  const view = render(<RigsWatch load={async () => RIGS} intervalMs={1000} filter={{}} sort="id" colour={false} now={() => NOW} />);
  t.teardown(() => view.unmount());
  Object.defineProperty(view.stdout, 'columns', { configurable: true, get: () => 80 });
  view.stdout.emit('resize');
  const end = Date.now() + 60_000;
  let frame = '';
  while (Date.now() < end) {
    frame = plain(view.lastFrame() ?? '');
    if (frame.includes('rig-c') && stringWidth(frame.split('\n')[0] ?? '') > 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const lines = frame.split('\n');
  for (const l of lines) t.ok(stringWidth(l) <= 80, `${stringWidth(l)} cells: ${l}`);
  const rows = lines.filter((l) => /\brig-[abc]\b/.test(l));
  t.equal(rows.length, 3, 'one line per rig');
  t.ok(rows.every((l) => /seconds ago|ago/.test(l)), 'the last-seen column on every rig\'s line');
});
