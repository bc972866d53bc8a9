// test: alone (npm pack and npm install -g)
// `npm pack` (what `npm install -g rigd-VERSION.tgz` installs): the command, the built code and what
// it reads at run time; no tests, sources or benchmarks; and that tarball installed with `npm install -g`.
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

// The real thing: the packed tarball installed globally into a scratch prefix (dependencies from the
// npm registry, install scripts skipped: `--version` loads no native module; without the optional
// Node runtimes, which only the Debian package uses), and `rigd` on its PATH.
test('npm install -g of the packed tarball puts rigd on PATH', async (t) => {
  const { mkdtempSync, rmSync, lstatSync } = await import('node:fs');
  const os = await import('node:os');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rigd-pack-'));
  try {
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--json'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 << 20 });
    t.equal(pack.status, 0, `npm pack (${pack.stderr.trim().split('\n').pop() ?? ''})`);
    const [{ filename }] = JSON.parse(pack.stdout) as { filename: string }[];
    const prefix = path.join(dir, 'prefix');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, path.join(dir, filename), '--ignore-scripts', '--omit=optional', '--no-audit', '--no-fund'], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 16 << 20,
      timeout: 300_000,
    });
    t.equal(install.status, 0, `npm install -g (${install.stderr.trim().split('\n').pop() ?? ''})`);
    t.ok(lstatSync(path.join(prefix, 'bin', 'rigd')).isSymbolicLink(), 'prefix/bin/rigd is linked');
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const run = spawnSync('rigd', ['--version'], { encoding: 'utf8', env: { ...process.env, PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}` } });
    t.equal(run.status, 0, 'rigd --version from PATH exits 0');
    t.equal(run.stdout.trim(), pkg.version, 'and prints the version');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
