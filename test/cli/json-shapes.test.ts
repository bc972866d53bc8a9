// Every listing command's --json is JSON only on stdout and has the shape README documents.
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('--json of every listing command parses, even on a fresh data_dir', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir(), RIGD_VPN_CIDR: '127.0.0.0/8' };
  const add = await rigd(['user', 'add', 'ops', '--email', 'ops@example.com', '--password-stdin', '--json'], { env, input: 'correct horse battery\n' });
  t.equal(add.code, 0, `user add ${add.stderr}`);
  const cases: [string[], (v: unknown) => boolean][] = [
    [['rigs', '--json'], Array.isArray],
    [['rigs', '--watch', '--json'], Array.isArray],
    [['uploads', '--json'], Array.isArray],
    [['uploads', '--watch', '--json'], Array.isArray],
    [['captures', '--json'], Array.isArray],
    [['captures', '--watch', '--json'], Array.isArray],
    [['user', 'list', '--json'], (v) => Array.isArray(v) && v.length === 1 && Object.keys(v[0]).sort().join() === 'admin,created_at,email,id,username'],
    [['migrate', '--json'], (v) => typeof v === 'object' && v !== null && Array.isArray((v as { pending: unknown }).pending)],
  ];
  for (const [args, shape] of cases) {
    const res = await rigd(args, { env });
    t.equal(res.code, 0, `${args.join(' ')}: exit 0 ${res.stderr}`);
    let value: unknown;
    try {
      value = JSON.parse(res.stdout);
    } catch {
      value = undefined;
    }
    t.ok(value !== undefined && shape(value), `${args.join(' ')}: JSON of the documented shape`);
    t.notOk(res.stdout.includes('\u001b['), `${args.join(' ')}: no escape codes`);
  }
});
