// The inspector from compiled JavaScript (as in dist/), under plain node without tsx: the child entry
// is found next to the compiled module with its .js extension.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'tape';
import { childExecArgv } from '../../src/ingest/capture-file.ts';
import { DEFAULT_CAPTURE_TABLES, makeCapture, makeHostileCapture } from '../helpers/capture-files.ts';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('compiled inspector runs its compiled child under plain node', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rigd-capture-dist-'));
  try {
    const out = path.join(dir, 'dist');
    const files = ['capture-file.ts', 'capture-child.ts', 'capture-reader.ts', 'capture-schema.ts'].map((f) =>
      path.join(root, 'src/ingest', f),
    );
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: path.join(root, 'tsconfig.build.json'),
        compilerOptions: { outDir: out, rootDir: path.join(root, 'src'), sourceMap: false },
        include: [],
        files,
      }),
    );
    await writeFile(path.join(dir, 'package.json'), '{"type":"module"}');
    // Type roots and the sqlite3 package are found through the temp dir's node_modules.
    await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
    const tsc = await run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')]).catch(
      (err: { stdout?: string }) => ({ stdout: `tsc failed: ${err.stdout}` }),
    );
    t.equal(tsc.stdout.trim(), '', 'tsc compiles the inspector');

    await mkdir(path.join(dir, 'caps'));
    const good = await makeCapture(path.join(dir, 'caps/good.db'));
    await makeHostileCapture(path.join(dir, 'caps/trigger.db'), 'trigger');
    const script = `
      import { inspectCapture } from ${JSON.stringify(path.join(out, 'ingest/capture-file.js'))};
      const steps = [];
      const info = await inspectCapture(process.argv[1], { maxBytes: 1e8, timeoutMs: 60000, onStep: (s) => steps.push(s) });
      const bad = await inspectCapture(process.argv[2], { maxBytes: 1e8, timeoutMs: 60000 }).catch((e) => e.reason);
      console.log(JSON.stringify({ execArgv: process.execArgv, steps, rows: info.tables.map((x) => x.rows), bad }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, good.path, path.join(dir, 'caps/trigger.db')], {
      cwd: dir,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const res = JSON.parse(stdout) as { execArgv: string[]; steps: string[]; rows: number[]; bad: string };
    t.notOk(res.execArgv.some((a) => a.includes('tsx')), `no tsx loader in the parent (${res.execArgv[0]} ...)`);
    t.deepEqual(res.steps.slice(-2), ['quick_check', 'tables'], 'the compiled child ran');
    t.deepEqual(res.rows, DEFAULT_CAPTURE_TABLES.map((x) => x.rows), 'row counts');
    t.equal(res.bad, 'unsupported_schema', 'hostile file rejected');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the child inherits loader flags and the heap cap, nothing else', (t) => {
  t.deepEqual(childExecArgv(['--import', 'tsx'], 64), ['--import', 'tsx', '--max-old-space-size=64'], 'tsx under tests');
  t.deepEqual(
    childExecArgv(['--require=./a.cjs', '-r', 'b', '--conditions', 'dev', '--enable-source-maps', '--max-old-space-size=4096', '--inspect=9229', '--input-type=module', '-e', 'x()', '--stack-size=50000'], 32),
    ['--require=./a.cjs', '-r', 'b', '--conditions', 'dev', '--enable-source-maps', '--max-old-space-size=32'],
    'no inspector, no eval, no second heap size',
  );
  t.end();
});
