// `rigd --config "$CFG"` with CFG unset or empty: refused with one line (exit 2, the config's exit
// code) instead of running on $RIGD_CONFIG, /etc/rigd/config.yaml or the built-in defaults.
import test from 'tape';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('rigd --config "": refused before anything is opened or created', async (t) => {
  const dir = tmpDir();
  const dataDir = path.join(dir, 'would-be-data');
  // RIGD_CONFIG names a valid config: an empty --config must not fall back to it.
  const fallback = path.join(dir, 'config.yaml');
  writeFileSync(fallback, `data_dir: ${dataDir}\n`);
  for (const args of [['--config', '', 'rigs'], ['-c', ' ', 'user', 'list'], ['--config=', 'migrate']]) {
    const res = await rigd(args, { env: { RIGD_CONFIG: fallback } });
    t.equal(res.code, 2, `rigd ${JSON.stringify(args)}: exit 2`);
    t.equal(res.stderr, 'rigd: config: --config is empty: name a config file, or leave --config out to use $RIGD_CONFIG or /etc/rigd/config.yaml\n', 'one line saying what to do');
    t.equal(res.stdout, '', 'nothing on stdout');
  }
  t.notOk(existsSync(dataDir), 'no data_dir was created from the fallback config');
  const ok = await rigd(['--config', fallback, 'migrate'], { env: {} });
  t.equal(ok.code, 0, `a named config still works ${ok.stderr}`);
});
