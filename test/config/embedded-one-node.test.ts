// With database.url set (PostgreSQL: the path to several nodes), the embedded store is refused
// unless cluster.single_node says this deployment is one node: a config error naming the keys and
// the fix, exit 2 from any command, and the fail line of rigd doctor's config check.
import test from 'tape';
import { loadConfig } from '../../src/config/load.ts';
import { ConfigError } from '../../src/errors.ts';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const URL = 'postgres://rigd:not-printed-pw@127.0.0.1:1/rigd';
const LINE =
  'config: storage.driver: "embedded" keeps objects on this node\'s disk, so it serves one node only (expected minio with database.url set, or cluster.single_node: true)';

const load = (env: Record<string, string>) => () => loadConfig({ env, overrides: { data_dir: tmpDir() } });

function errorOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

test('database.url with the embedded store: refused unless cluster.single_node; minio and SQLite are fine', (t) => {
  t.equal(errorOf(load({ RIGD_DATABASE_URL: URL })), LINE, 'the default driver (embedded) with database.url: the line names the keys and the fix');
  t.equal(errorOf(load({ RIGD_DATABASE_URL: URL, RIGD_STORAGE_DRIVER: 'embedded' })), `${LINE} (from RIGD_STORAGE_DRIVER)`, 'and where the driver came from');
  t.equal(errorOf(load({ RIGD_DATABASE_URL: URL, RIGD_CLUSTER_SINGLE_NODE: 'false' })), LINE, 'single_node false: refused');
  t.equal(errorOf(load({ RIGD_DATABASE_URL: URL, RIGD_CLUSTER_SINGLE_NODE: 'true' })), null, 'cluster.single_node: true allows it');
  t.equal(errorOf(load({ RIGD_DATABASE_URL: URL, RIGD_STORAGE_DRIVER: 'minio' })), null, 'minio with database.url: fine');
  t.equal(errorOf(load({})), null, 'SQLite with the embedded store (the default install): fine');
  t.equal(errorOf(load({ RIGD_CLUSTER_SINGLE_NODE: 'false' })), null, 'SQLite is one node whatever single_node says');
  t.end();
});

test('rigd serve and rigd migrate refuse it with the one line, exit 2, before touching the database', async (t) => {
  for (const args of [['serve', '--port', '0', '--host', '127.0.0.1'], ['migrate']]) {
    const r = await rigd(args, { env: { RIGD_DATA_DIR: tmpDir(), RIGD_DATABASE_URL: URL, RIGD_CLUSTER_SINGLE_NODE: 'false' } });
    t.equal(r.code, 2, `rigd ${args[0]}: exit 2`);
    t.equal(r.stderr.trim(), `rigd: ${LINE}`, `rigd ${args[0]}: the line on stderr, nothing else`);
    t.notOk(`${r.stdout}${r.stderr}`.includes('not-printed-pw'), 'no password printed');
  }
});

test("rigd doctor: the config check fails with the line and how to fix it", async (t) => {
  const r = await rigd(['doctor'], { env: { RIGD_DATA_DIR: tmpDir(), RIGD_DATABASE_URL: URL, RIGD_CLUSTER_SINGLE_NODE: 'false' } });
  t.equal(r.code, 1, 'exit 1');
  const line = r.stdout.split('\n').find((l) => /^fail\s+config\s/.test(l)) ?? '';
  t.ok(line.endsWith(LINE), line);
  t.match(r.stdout, /fix: correct the key named above/, 'with its fix');
});
