// The reference pages generated from the code (scripts/docs.mjs, run by npm run build):
// docs/configuration.md is what the script makes from the schema now, as committed; the man pages
// rigd(1) and rigd.yaml(5) render without a warning and list every command, option and key.
// Needs `npm run build`.
import test from 'tape';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { configSchema } from '../../src/config/schema.ts';
import { envName } from '../../src/config/load.ts';
import { ROOT } from '../helpers/cli.ts';

const generated = execFileSync(process.execPath, [path.join(ROOT, 'scripts/docs.mjs'), '--print-config'], { encoding: 'utf8' });

function leafKeys(): string[] {
  const out: string[] = [];
  const walk = (desc: { type?: string; keys?: Record<string, unknown> }, prefix: string[]) => {
    if (desc.type === 'object' && desc.keys) for (const [k, v] of Object.entries(desc.keys)) walk(v as typeof desc, [...prefix, k]);
    else out.push(prefix.join('.'));
  };
  walk(configSchema.describe() as never, []);
  return out;
}

/** docs/configuration.md as committed (HEAD) in a git checkout, else as on disk. */
function committedReference(): { text: string; from: string } {
  const git = spawnSync('git', ['-C', ROOT, 'show', 'HEAD:docs/configuration.md'], { encoding: 'utf8' });
  if (git.status === 0) return { text: git.stdout, from: 'docs/configuration.md as committed' };
  return { text: readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8'), from: 'docs/configuration.md' };
}

test('docs/configuration.md is what scripts/docs.mjs generates from the schema now', (t) => {
  const { text, from } = committedReference();
  t.equal(text, generated, `${from} equals the generated reference (if not: npm run build, then commit docs/configuration.md)`);
  for (const key of leafKeys()) {
    const row = generated.split('\n').find((l) => l.startsWith(`| \`${key}\` |`));
    t.ok(row, `${key} has a row`);
    if (row) t.ok(row.includes(`\`${envName(key.split('.'))}\``), `${key}: its environment variable`);
  }
  const port = generated.split('\n').find((l) => l.startsWith('| `server.port` |'));
  t.equal(port, '| `server.port` | integer 0..65535 | `3000` | `RIGD_SERVER_PORT` |  |', 'a row: key, type with range, default, environment');
  t.end();
});

function render(file: string): { text: string; warnings: string } {
  // groff with every warning on (-ww), as man -l would render it; plain text for matching.
  const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-rLL=200n', file], { encoding: 'utf8', env: { ...process.env, GROFF_NO_SGR: '1' } });
  if (r.error) throw r.error;
  return { text: r.stdout.replace(/.\x08/g, '').replace(/\u2010/g, '-').replace(/\u2212/g, '-'), warnings: r.stderr };
}

function walk(cmd: Command, out: Command[] = []): Command[] {
  for (const c of cmd.commands) {
    out.push(c);
    walk(c, out);
  }
  return out;
}

function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

test('man page rigd(1): renders without warnings and lists every command and option', (t) => {
  const file = path.join(ROOT, 'dist/man/rigd.1');
  t.ok(existsSync(file), 'npm run build wrote dist/man/rigd.1');
  const man = spawnSync('man', ['-l', '-P', 'cat', file], { encoding: 'utf8' });
  t.equal(man.status, 0, 'man -l shows it');
  const { text, warnings } = render(file);
  t.equal(warnings, '', 'groff -ww: no warning');
  const program = buildProgram();
  const commands = walk(program);
  t.ok(commands.length >= 20, `${commands.length} commands in the program`);
  for (const cmd of commands) {
    t.ok(new RegExp(`^ {3}${pathOf(cmd)}$`, 'm').test(text), `rigd ${pathOf(cmd)} has its section`);
    for (const o of cmd.options) t.ok(text.includes(o.flags), `rigd ${pathOf(cmd)} ${o.flags}`);
  }
  for (const name of ['fleet', 'db copy']) t.ok(text.includes(`rigd ${name}`), `names rigd ${name}`);
  t.end();
});

test('man page rigd.yaml(5): renders without warnings and lists every config key', (t) => {
  const file = path.join(ROOT, 'dist/man/rigd.yaml.5');
  t.ok(existsSync(file), 'npm run build wrote dist/man/rigd.yaml.5');
  const { text, warnings } = render(file);
  t.equal(warnings, '', 'groff -ww: no warning');
  for (const key of leafKeys()) t.ok(new RegExp(`^ {7}${key.replace(/\./g, '\\.')}$`, 'm').test(text), `${key}`);
  t.end();
});
