// Identity events: one structured line each, with a stable `event` field; quota refusals are one line
// per (rig, bound, minute) with their count.
import test from 'tape';
import { createLogger, type Logger } from '../../../src/log.ts';
import { identityEvents } from '../../../src/services/rigs/identity-events.ts';

function capture(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', (line) => void lines.push(JSON.parse(line) as Record<string, unknown>));
  return { log, lines };
}

test('refusals, takeovers and rebinds: one line each at once; quota refusals aggregated per rig, bound and minute', (t) => {
  const { log, lines } = capture();
  let now = Date.UTC(2026, 10, 26, 9, 0, 5);
  const record = identityEvents(log, () => now);
  record('rig_report_refused', { rig: 'rig5', bound: '10.144.20.2', address: '10.144.20.3', mode: 'strict' });
  record('rig_takeover', { rig: 'rig6', from: '10.144.20.2', to: '10.144.20.3' });
  t.deepEqual(lines.map((l) => l.event), ['rig_report_refused', 'rig_takeover'], 'logged at once, with their kind as event');
  for (let i = 0; i < 500; i++) record('quota_refused', { rig: 'rig7', bound: 'open_per_rig' });
  record('quota_refused', { rig: 'rig8', bound: 'open_per_rig' });
  now += 60_000; // the next minute
  record('quota_refused', { rig: 'rig7', bound: 'open_per_rig' });
  t.equal(lines.length, 2, 'quota refusals wait for their minute to end');
  record.flush();
  const quota = lines.slice(2).map((l) => [l.event, l.rig, l.count, l.minute]);
  t.deepEqual(
    quota,
    [
      ['quota_refused', 'rig7', 500, '2026-11-26T09:00:00.000Z'],
      ['quota_refused', 'rig8', 1, '2026-11-26T09:00:00.000Z'],
      ['quota_refused', 'rig7', 1, '2026-11-26T09:01:00.000Z'],
    ],
    'one line per rig, bound and minute, with the count',
  );
  t.end();
});
