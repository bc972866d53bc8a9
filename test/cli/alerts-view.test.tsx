// The `rigd alerts --watch` view, rendered with ink-testing-library: open incidents first with
// their state, kind, subject and text; a new incident appears at the next refresh; rig-reported
// control characters are shown escaped.
import test from 'tape';
import { render } from 'ink-testing-library';
import { AlertsWatch } from '../../src/cli/views/alerts-watch.tsx';
import type { IncidentView } from '../../src/services/alerts/list.ts';

const incident = (id: number, extra: Partial<IncidentView> = {}): IncidentView => ({
  id,
  kind: 'rig_offline',
  subject: `rig${id}`,
  state: 'open',
  opened_at: '2026-11-26T10:00:00.000Z',
  last_notified_at: '2026-11-26T10:00:00.000Z',
  resolved_at: null,
  acked_at: null,
  acked_by: null,
  count: 1,
  text: `rig rig${id} offline: no report since 2026-11-26T09:59:57.000Z`,
  ...extra,
});

test('AlertsWatch: rows, states, a new incident at the next refresh, escaped text', async (t) => {
  let list = [incident(1), incident(2, { state: 'resolved', resolved_at: '2026-11-26T10:05:00.000Z', text: 'rig rig2 back \u001b[31mred' })];
  const view = render(<AlertsWatch load={async () => list} intervalMs={200} colour={false} />);
  const frame = async (want: RegExp) => {
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      const f = view.lastFrame() ?? '';
      if (want.test(f)) return f;
      await new Promise((r) => setTimeout(r, 20));
    }
    return view.lastFrame() ?? '';
  };
  const first = await frame(/rig rig1 offline/);
  t.match(first, /1 open incidents · 1 resolved in the last 24 h/, 'summary');
  t.match(first, /ID +STATE +KIND/, 'header');
  t.match(first, /1 +open +rig_offline +rig1/, 'the open incident');
  t.match(first, /2 +resolved +rig_offline +rig2/, 'the resolved one');
  t.notOk(first.includes('\u001b[31m'), 'control characters escaped');
  list = [incident(3, { kind: 'fleet_outage', subject: null, text: 'fleet outage: 8 of 10 rigs went silent together' }), ...list];
  const next = await frame(/fleet_outage/);
  t.match(next, /3 +open +fleet_outage +-/, 'a new incident at the next refresh');
  view.unmount();
});
