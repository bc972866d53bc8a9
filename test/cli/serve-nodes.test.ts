// `rigd serve` in the node registry: a second live process with the same instance id refuses to
// start with one line; on SQLite so does a second one with another id (one node per data_dir, its
// serve lock); the first one killed frees its place (SQLite: at once, the lock died with it;
// PostgreSQL: once its heartbeat is stale); a clean stop marks the node stopped.
import { execFileSync } from 'node:child_process';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';
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
  // A heartbeat every 5 s: live for 15 s after the last one. At 1 s (3 s) a starved first process
  // could look stale to the second, which would then take its id over.
  const env = { RIGD_DATA_DIR: dataDir, RIGD_CLUSTER_INSTANCE_ID: 'gw-a', RIGD_CLUSTER_HEARTBEAT_S: '5' };
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

    if (onPostgres) {
      const other = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' });
      t.pass('another instance id starts beside it');
      t.equal(await other.stop(), 0);
      t.equal((await nodeRow(dataDir, 'gw-b'))?.stopped, true, 'a clean stop marks the node stopped');
    } else {
      const other = await rigd(['serve', '--port', '0', '--host', '127.0.0.1'], { env: { ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' } });
      t.equal(other.code, 1, 'SQLite: a second rigd serve on the data_dir, with another id, exits 1');
      t.match(other.stderr, /^rigd: this data_dir is held by a live node "gw-a" \(.+, pid \d+, heartbeat \d+ s ago\): on SQLite one rigd serve runs per data_dir/, `naming the live one: ${other.stderr}`);
      t.equal(other.stderr.trim().split('\n').length, 1, 'in one line');
      t.notOk(other.stdout.includes('listening'), 'it never said it was listening');
      t.equal(await nodeRow(dataDir, 'gw-b'), null, 'and never registered');
    }
  } finally {
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
  }
  // Killed: no clean stop, its heartbeat fresh a moment ago.
  t.equal((await nodeRow(dataDir, 'gw-a'))?.stopped, false, 'the killed node did not mark itself stopped');
  const again = await serveProcess(env);
  t.pass(onPostgres ? 'a restart after a kill -9 takes the id over once the old heartbeat is stale' : 'a restart right after a kill -9 takes the data_dir over at once (the lock died with the process)');
  t.equal((await nodeRow(dataDir, 'gw-a'))?.pid, again.child.pid, 'the row names the new process');
  t.equal(await again.stop(), 0);
});
