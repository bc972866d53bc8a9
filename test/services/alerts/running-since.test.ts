// Since when rigd has run without a break, by the nodes' registry (a rig's silence counts from then).
import test from 'tape';
import { runningSince } from '../../../src/services/alerts/away.ts';

const NOW = Date.UTC(2026, 10, 26, 12);
const at = (sAgo: number) => new Date(NOW - sAgo * 1000);
const LIVE_MS = 15_000;
/** A node started sAgo seconds ago, last heartbeat hbAgo ago, stopped stopAgo ago (or not). */
const node = (startAgo: number, hbAgo: number, stopAgo: number | null = null) => ({ startedAt: at(startAgo), heartbeatAt: at(hbAgo), stoppedAt: stopAgo === null ? null : at(stopAgo) });
const since = (...nodes: ReturnType<typeof node>[]) => runningSince(nodes, new Date(NOW), LIVE_MS)?.getTime() ?? null;

test('one node: since its start; none running now: unknown', (t) => {
  t.equal(since(node(60, 2)), NOW - 60_000, 'running for a minute');
  t.equal(since(), null, 'no node registered');
  t.equal(since(node(7200, 3600, 3600)), null, 'the only node stopped an hour ago');
  t.equal(since(node(7200, 3600)), null, 'the only node killed an hour ago (heartbeat stale)');
  t.end();
});

test('several nodes: a break only when none ran', (t) => {
  t.equal(since(node(60, 2), node(86_400, 3)), NOW - 86_400_000, 'another node ran all along: no break at this one\'s restart');
  t.equal(since(node(60, 2), node(86_400, 30, 30)), NOW - 86_400_000, 'the other stopped after this one started: no break');
  t.equal(since(node(60, 2), node(86_400, 3600, 3600)), NOW - 60_000, 'the other stopped an hour before this one started: a break');
  t.equal(since(node(60, 2), node(86_400, 70)), NOW - 86_400_000, 'the other killed, its heartbeat within the live time before this start');
  t.equal(since(node(60, 2), node(86_400, 100, 0)), NOW - 60_000, 'a dead node marked stopped now (SQLite start): its last heartbeat counts, not the mark');
  t.equal(since(node(60, 2), node(600, 50), node(86_400, 590, 590)), NOW - 86_400_000, 'a chain of runs, each starting before the previous ended');
  t.end();
});
