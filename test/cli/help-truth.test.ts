// --help says what the command does: `captures reimport --wait` waits for every capture it queued
// (src/cli/commands/capture-reimport.ts waitAll), it does not stop at the first one that failed.
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
