// --help and the argument checks tell the truth: `captures reimport --wait` waits for every capture it
// queued (capture-reimport.ts waitAll), not until the first failure; an empty rig id is said to be empty.
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('rigd captures reimport --help: --wait waits for every capture, exit 1 if any failed', async (t) => {
  const res = await rigd(['captures', 'reimport', '--help'], { env: { RIGD_DATA_DIR: tmpDir() } });
  t.equal(res.code, 0, 'exit 0');
  const text = res.stdout.replace(/\s+/g, ' ');
  t.match(text, /--wait wait until every capture queued has ended: exit 0 when all were ingested, 1 when any failed/, '--wait as it behaves');
  t.doesNotMatch(text, /or one failed/, 'not "until ... one failed"');
});

test('rigd rigs show|history|forget|rebind with an empty rig id: exit 2, one line saying so', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir() };
  for (const args of [['rigs', 'show', ''], ['rigs', 'history', ' '], ['rigs', 'forget', ''], ['rigs', 'rebind', '', '10.144.116.5']]) {
    const res = await rigd(args, { env });
    t.equal(res.code, 2, `rigd ${JSON.stringify(args)}: exit 2`);
    t.equal(res.stderr, 'rigd: rig id is empty: give a rig id as rigd rigs lists it\n', 'one line saying the id is empty');
    t.equal(res.stdout, '', 'nothing on stdout');
  }
});
