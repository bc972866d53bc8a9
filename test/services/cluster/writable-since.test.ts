// Since when this node has written the database without a break, as its heartbeats saw it (the
// alerts judge a node's and a rig's silence from then): a failed write is a break, the return is
// the database's now after the next write that succeeds; until then the sweep's own now.
import test from 'tape';
import { WritableSince } from '../../../src/services/cluster/writable-since.ts';
import { sleep } from '../../helpers/jobs.ts';

const RETURN = new Date(Date.UTC(2026, 10, 27, 14, 3));
const NOW = new Date(Date.UTC(2026, 10, 27, 14, 5));

test('no break seen: nothing to forgive', async (t) => {
  const w = new WritableSince(60_000, async () => RETURN);
  t.equal(w.at(NOW), null, 'before any write');
  await w.wrote();
  await w.wrote();
  t.equal(w.at(NOW), null, 'writes in a row');
  t.end();
});

test('a failed write: the sweep judges from its own now; the next write that succeeds is the return', async (t) => {
  const w = new WritableSince(60_000, async () => RETURN);
  await w.wrote();
  w.failed();
  t.equal(w.at(NOW)?.getTime(), NOW.getTime(), 'while the last write failed: silence counts from now');
  await w.wrote();
  t.equal(w.at(NOW)?.getTime(), RETURN.getTime(), "after the next write: from the database's now then");
  await w.wrote();
  t.equal(w.at(NOW)?.getTime(), RETURN.getTime(), 'later writes keep it');
  t.end();
});

test('the return cannot be read: still broken, read again at the next write', async (t) => {
  let reachable = false;
  const w = new WritableSince(60_000, async () => {
    if (!reachable) throw new Error('connection terminated');
    return RETURN;
  });
  w.failed();
  await w.wrote();
  t.equal(w.at(NOW)?.getTime(), NOW.getTime(), 'not known yet: from now');
  reachable = true;
  await w.wrote();
  t.equal(w.at(NOW)?.getTime(), RETURN.getTime(), 'read at the next write');
  t.end();
});

test('writes further apart than two periods (a write that hung): a break too', async (t) => {
  const w = new WritableSince(10, async () => RETURN);
  await w.wrote();
  await sleep(50);
  await w.wrote();
  t.equal(w.at(NOW)?.getTime(), RETURN.getTime(), 'the return after the gap');
  t.end();
});
