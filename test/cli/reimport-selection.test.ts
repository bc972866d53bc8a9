// `rigd captures reimport`: --all (every capture) with --rig or --since contradicts itself: a usage
// error naming the flags that exclude each other, before anything is opened; --rig with --since
// narrows both ways and is allowed.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('--all with --rig or --since: exit 2 naming the flags, nothing opened', async (t) => {
  const dataDir = path.join(tmpDir(), 'data');
  const cases: [string[], string][] = [
    [['--all', '--rig', 'rig7'], '--all and --rig'],
    [['--rig', 'rig7', '--all'], '--all and --rig'],
    [['--all', '--since', '24h'], '--all and --since'],
    [['--since', '2026-11-01T00:00Z', '--all', '--wait'], '--all and --since'],
    [['--all', '--rig', 'rig7', '--since', '24h', '--json'], '--all and --rig'],
  ];
  for (const [flags, pair] of cases) {
    const res = await rigd(['captures', 'reimport', ...flags], { env: { RIGD_DATA_DIR: dataDir } });
    t.deepEqual([res.code, res.stdout, res.stderr], [2, '', `rigd: ${pair} exclude each other: give one\n`], `reimport ${flags.join(' ')}: exit 2, one line`);
  }
  t.notOk(existsSync(dataDir), 'nothing opened or created');
  t.end();
});

test('--rig with --since is a selection: it runs', async (t) => {
  const dataDir = path.join(tmpDir(), 'data');
  mkdirSync(dataDir);
  const res = await rigd(['captures', 'reimport', '--rig', 'rig7', '--since', '24h'], { env: { RIGD_DATA_DIR: dataDir } });
  t.deepEqual([res.code, res.stdout], [0, 'no ingested capture matches: nothing queued\n'], res.stderr.trim());
  t.end();
});
