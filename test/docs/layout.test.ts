// README's "## Layout" cannot go stale silently: it stays short, and the data path of a rig report it
// shows (one line of `src/...ts` files joined by arrows) names at most four files, each of which
// exists and imports the next.
import test from 'tape';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli.ts';

const MAX_LINES = 12;
const MAX_FILES = 4;

/** The lines of README's "## Layout" section, its heading excluded. */
function layoutSection(readme: string): string[] | null {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.trim() === '## Layout');
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? lines.length : end);
}

/** The src files a file imports (relative specifiers, type-only imports left out), resolved from ROOT. */
function importsOf(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/^\s*import\s+(type\s+)?[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)) {
    if (m[1]) continue;
    out.add(path.normalize(path.join(path.dirname(file), m[2]!)));
  }
  return out;
}

test("README's Layout: where the code is, and a rig report's path in at most four files, each importing the next", (t) => {
  const section = layoutSection(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  if (!section) {
    t.fail('README.md has a "## Layout" section');
    t.end();
    return;
  }
  const body = section.join('\n').trim().split('\n');
  t.ok(body.length <= MAX_LINES, `the section has ${body.length} lines (at most ${MAX_LINES})`);
  for (const dir of ['server', 'services', 'ingest', 'jobs', 'storage', 'config', 'db']) {
    t.ok(body.some((l) => l.includes(`${dir}/`)), `it names src/${dir}/`);
  }
  const pathLine = body.find((l) => /`src\/[^`]+\.ts`\s*(->|→)/.test(l));
  const files = [...(pathLine ?? '').matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]!);
  t.ok(files.length >= 2 && files.length <= MAX_FILES, `the report path names ${files.length} src files (2 to ${MAX_FILES}): ${files.join(' -> ')}`);
  t.equal(files[0], 'src/server/routes/rigs.ts', 'it starts at the route');
  for (const f of files) t.ok(existsSync(path.join(ROOT, f)), `${f} exists`);
  for (let i = 0; i + 1 < files.length; i++) {
    const from = files[i]!;
    const to = files[i + 1]!;
    t.ok(existsSync(path.join(ROOT, from)) && importsOf(from).has(to), `${from} imports ${to}`);
  }
  t.end();
});
