// `npm pack` (what `npm install -g rigd-VERSION.tgz` installs): the command, the built code and what
// it reads at run time; no tests, sources or benchmarks. Nothing is installed.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ROOT } from '../helpers/cli.ts';

test('npm pack holds bin/rigd, dist/ and the run-time files, and no tests', (t) => {
  const res = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 << 20 });
  t.equal(res.status, 0, `npm pack --dry-run (${res.stderr.trim().split('\n').pop() ?? ''})`);
  const [pack] = JSON.parse(res.stdout) as { files: { path: string; mode: number }[] }[];
  const files = pack.files.map((f) => f.path);
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  t.equal(pkg.bin.rigd, 'bin/rigd', 'package.json bin: rigd -> bin/rigd (npm links it onto PATH)');
  for (const f of ['bin/rigd', 'package.json', 'dist/cli/main.js', 'dist/config/load.js', 'templates/rigs.hbs', 'public/rigs.css', 'config.example.yaml', 'systemd/rigd.service']) {
    t.ok(files.includes(f), f);
  }
  t.ok((pack.files.find((f) => f.path === 'bin/rigd')!.mode & 0o111) !== 0, 'bin/rigd is executable in the tarball');
  const unwanted = files.filter((f) => /^(test|src|bench|scripts|packaging|node_modules)\//.test(f) || /\.test\.tsx?$/.test(f));
  t.deepEqual(unwanted, [], 'no tests, sources, benchmarks or build scripts');
  t.end();
});
