// The documentation cannot drift from the program: every relative link and anchor resolves, every
// `rigd ...` command line it shows is a command of bin/rigd with options its --help lists, and every
// dotted config key it names is in the schema. README.md stays a front door (<= 250 lines).
// Skips docs/_incoming (fragments to fold in) and docs/perf (dated investigations).
// Needs `npm run build` (it runs bin/rigd).
import test from 'tape';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { configSchema } from '../../src/config/schema.ts';
import { rigd, ROOT } from '../helpers/cli.ts';
import { commandWords, docFiles, readDoc, type Doc } from './markdown.ts';

const allowed = new Set(
  readFileSync(path.join(ROOT, 'test/docs/allowlist.txt'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')),
);

const docs: Doc[] = docFiles(ROOT).map((f) => readDoc(ROOT, f));
const byFile = new Map(docs.map((d) => [d.file, d]));

test('README.md is at most 250 lines, and says what rigd is before anything else', (t) => {
  const text = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  t.ok(text.split('\n').length <= 251, `README.md has ${text.split('\n').length - 1} lines`);
  const firstSection = text.split('\n## ')[0];
  t.match(firstSection, /rigd runs on an on-premise VPN gateway/, 'what rigd is comes first');
  t.match(firstSection, /Who uses it/, 'who uses it comes first');
  t.end();
});

test('every relative link and anchor in README.md and docs/ resolves', (t) => {
  let checked = 0;
  for (const doc of docs) {
    for (const { target, line } of doc.links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto:, man: ...
      const [file, anchor] = target.split('#');
      const resolved = file === '' ? doc.file : path.normalize(path.join(path.dirname(doc.file), file));
      const where = `${doc.file}:${line} -> ${target}`;
      checked++;
      // docs/install.md is written on the packaging branch; the link is checked once it exists.
      if (!existsSync(path.join(ROOT, resolved))) {
        if (resolved === path.join('docs', 'install.md')) continue;
        t.fail(`${where}: ${resolved} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      const target_ = byFile.get(resolved) ?? (resolved.endsWith('.md') ? readDoc(ROOT, resolved) : undefined);
      if (!target_) {
        t.fail(`${where}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!target_.anchors.has(anchor)) t.fail(`${where}: no heading with anchor #${anchor} in ${resolved}`);
    }
  }
  t.ok(checked > 30, `${checked} links checked`);
  t.end();
});

/** The command tree as bin/rigd's own --help shows it: path -> {subcommands, takes arguments, help text}. */
interface HelpNode {
  help: string;
  subcommands: Set<string>;
  takesArguments: boolean;
}
const helpCache = new Map<string, Promise<HelpNode | null>>();
function helpOf(words: string[]): Promise<HelpNode | null> {
  const key = words.join(' ');
  let p = helpCache.get(key);
  if (!p) {
    p = rigd([...words, '--help'], { env: {} }).then((r) => {
      if (r.code !== 0) return null;
      const usage = /^Usage: rigd(.*)$/m.exec(r.stdout)?.[1] ?? '';
      const commands = r.stdout.split(/^Commands:$/m)[1] ?? '';
      const subcommands = new Set([...commands.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]).filter((n) => n !== 'help'));
      const takesArguments = /<[^>]+>|\[(?!options\]|command\])[^\]]+\]/.test(usage.replace(/\[options\]|\[command\]/g, ''));
      return { help: r.stdout, subcommands, takesArguments };
    });
    helpCache.set(key, p);
  }
  return p;
}

/** Resolves `rigd WORDS...` to a command path, or says what is wrong with it. */
async function resolve(words: string[]): Promise<{ path: string[]; node: HelpNode } | { error: string }> {
  const top = await helpOf([]);
  if (!top) return { error: 'rigd --help fails' };
  const pathWords: string[] = [];
  let node = top;
  for (const w of words) {
    if (w.startsWith('-') || w.startsWith('[') || !/^[a-z][a-z-]*$/.test(w)) break;
    if (node.subcommands.has(w)) {
      const next = await helpOf([...pathWords, w]);
      if (!next) return { error: `rigd ${[...pathWords, w].join(' ')} --help fails` };
      pathWords.push(w);
      node = next;
      continue;
    }
    if (node.subcommands.size > 0 && !node.takesArguments) return { error: `rigd ${[...pathWords, w].join(' ')}: no such command` };
    break;
  }
  if (pathWords.length === 0) return { error: `rigd ${words[0]}: no such command` };
  return { path: pathWords, node };
}

function optionsOf(words: string[]): string[] {
  return words
    .flatMap((w) => w.replace(/^\[|\]$/g, '').split('|'))
    .filter((w) => /^--?[a-zA-Z]/.test(w))
    .map((w) => w.replace(/[=\]].*$/, ''));
}

test('every `rigd ...` command line in README.md and docs/ is a command of bin/rigd, with options its --help lists', async (t) => {
  const seen = new Set<string>();
  const lines = docs.flatMap((d) => d.commands.map((c) => ({ ...c, file: d.file })));
  t.ok(lines.length > 50, `${lines.length} command lines found`);
  for (const { text, line, file } of lines) {
    const words = commandWords(text);
    const key = words.join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    if ([...allowed].some((a) => a.startsWith('rigd ') && `rigd ${key}`.startsWith(a))) continue;
    const r = await resolve(words);
    if ('error' in r) {
      t.fail(`${file}:${line}: \`${text}\`: ${r.error}`);
      continue;
    }
    const global = (await helpOf([]))!.help;
    for (const opt of optionsOf(words)) {
      const listed = (help: string) => new RegExp(`(^|[\\s,])${opt.replace(/[-]/g, '\\-')}([\\s,]|$)`, 'm').test(help);
      if (!listed(r.node.help) && !listed(global)) t.fail(`${file}:${line}: \`${text}\`: rigd ${r.path.join(' ')} has no option ${opt}`);
    }
  }
  t.pass(`${seen.size} distinct command lines checked against --help of ${helpCache.size} commands`);
});

function configKeys(): Set<string> {
  const out = new Set<string>();
  const walk = (desc: { type?: string; keys?: Record<string, unknown> }, prefix: string) => {
    if (desc.type === 'object' && desc.keys) {
      if (prefix) out.add(prefix);
      for (const [k, v] of Object.entries(desc.keys)) walk(v as typeof desc, prefix ? `${prefix}.${k}` : k);
    } else out.add(prefix);
  };
  walk(configSchema.describe() as never, '');
  return out;
}

test('every dotted config key named in README.md and docs/ is in the config schema', (t) => {
  const keys = configKeys();
  const sections = new Set([...keys].map((k) => k.split('.')[0]));
  let checked = 0;
  for (const doc of docs) {
    for (const { text, line } of doc.inlineCode) {
      if (!/^[a-z_]+(\.[a-z_*]+)+$/.test(text) || !sections.has(text.split('.')[0])) continue;
      if (allowed.has(text)) continue;
      checked++;
      const key = text.replace(/\.\*$/, '');
      if (!keys.has(key)) t.fail(`${doc.file}:${line}: \`${text}\` is not a config key`);
    }
  }
  t.ok(checked > 50, `${checked} config keys named`);
  t.end();
});
