// rigd doctor with database.url naming a PostgreSQL server that does not answer (stopped, wrong
// port): the database line fails with its fix, and the lines that need the same server say to see
// it, instead of a fix of their own that does not apply (a grant cannot help a server that is down).
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { freePort } from '../helpers/free-port.ts';
import { tmpDir } from '../helpers/tmp.ts';

const block = (out: string, check: string): string => {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => new RegExp(`^(ok|warn|fail)\\s+${check}\\s`).test(l));
  if (i < 0) return '';
  return [lines[i], ...(lines[i + 1]?.trimStart().startsWith('fix:') ? [lines[i + 1]] : [])].join('\n');
};

test('doctor: a database server that does not answer: the checks on it point at the database line', async (t) => {
  const port = await freePort('127.0.0.1');
  const env = { RIGD_DATA_DIR: tmpDir(), RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_DATABASE_URL: `postgres://rigd:pw-not-shown@127.0.0.1:${port}/rigd` };
  const res = await rigd(['doctor'], { env });
  t.equal(res.code, 1, 'exit 1');
  t.match(block(res.stdout, 'database'), /^fail\s+database\s+.*connection refused[^]*fix: check database.url/, 'the database line fails with its fix');
  const store = block(res.stdout, 'capture_store');
  t.match(store, /^fail\s+capture_store\s+/, store);
  t.match(store, /fix: see the database line above/, 'capture_store: see the database line');
  t.notOk(/USAGE and CREATE/.test(store), 'capture_store: no grant to give (the server is down, not refusing rights)');
  for (const check of ['nodes', 'duties', 'notifications']) {
    t.match(block(res.stdout, check), /^warn\s+\S+\s+.*ECONNREFUSED[^]*fix: see the database line above$/, `${check}: warn, see the database line`);
  }
  t.notOk(res.stdout.includes('pw-not-shown'), 'no password in the output');
});
