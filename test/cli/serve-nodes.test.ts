// `rigd serve` in the node registry: a second live process with the same instance id refuses to
// start with one line; the first one killed (same host, its pid gone) frees the id at once; a clean
// stop marks the node stopped.
import { execFileSync } from 'node:child_process';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { rigd, serveProcess } from '../helpers/cli.ts';
import { withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

async function nodeRow(dataDir: string, id: string) {
  const db = await openDatabase(...withDb(dataDir));
  try {
    const row = await db.models.Node.findByPk(id);
    return row && { pid: row.pid, stopped: row.stopped_at !== null, version: row.version };
  } finally {
    await db.close();
  }
}

test('two live rigd serve with one instance id: the second refuses with one line and exit 1', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir, RIGD_CLUSTER_INSTANCE_ID: 'gw-a' };
  const first = await serveProcess(env);
  try {
    const row = await nodeRow(dataDir, 'gw-a');
    t.deepEqual(row, { pid: first.child.pid, stopped: false, version: JSON.parse(execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").version)'], { encoding: 'utf8' })) }, 'the first registered under its instance id');
    const second = await rigd(['serve', '--port', '0', '--host', '127.0.0.1'], { env });
    t.equal(second.code, 1, 'the second exits 1');
    const lines = second.stderr.trim().split('\n');
    t.equal(lines.length, 1, `one line: ${second.stderr}`);
    t.match(lines[0]!, /^rigd: instance id "gw-a" is taken by a live node \(.+, pid \d+, heartbeat \d+ s ago\)/, 'naming the id and the live holder');
    t.notOk(second.stdout.includes('listening'), 'it never said it was listening for good');

    const other = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' });
    t.pass('another instance id starts beside it');
    t.equal(await other.stop(), 0);
    t.equal((await nodeRow(dataDir, 'gw-b'))?.stopped, true, 'a clean stop marks the node stopped');
  } finally {
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
  }
  // Killed: no clean stop, heartbeat fresh, but its pid is gone on this host.
  t.equal((await nodeRow(dataDir, 'gw-a'))?.stopped, false, 'the killed node did not mark itself stopped');
  const again = await serveProcess(env);
  t.pass('a restart right after a kill -9 on the same host takes the id over at once');
  t.equal((await nodeRow(dataDir, 'gw-a'))?.pid, again.child.pid, 'the row names the new process');
  t.equal(await again.stop(), 0);
});
