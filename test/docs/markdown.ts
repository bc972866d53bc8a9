// What the documentation names, read off its Markdown: headings (as GitHub anchors), relative links,
// `rigd ...` command lines and dotted config keys. Line-based: fenced blocks, headings, inline code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface Doc {
  file: string; // relative to the project root
  anchors: Set<string>;
  links: { target: string; line: number }[];
  commands: { text: string; line: number }[];
  inlineCode: { text: string; line: number }[];
}

/** GitHub's anchor for a heading (as github-slugger makes it): lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The Markdown files of README.md, CHANGELOG.md and docs/, without docs/_incoming and docs/perf. */
export function docFiles(root: string): string[] {
  const out = ['README.md', 'CHANGELOG.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(root, dir)).sort()) {
      const rel = path.join(dir, name);
      if (rel === path.join('docs', '_incoming') || rel === path.join('docs', 'perf')) continue;
      if (statSync(path.join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
}

/** Where a command starts in a shell line: its start (after `$ ` or `sudo`), or after `&&`, `;`, `|` or `--`. */
const COMMAND_START = /(?:^\s*|(?:&&|;|\||--)\s+)(?:sudo\s+)?(?=rigd\s+[a-z])/g;

/** Command lines in a fenced block (comments after ` # ` left out). */
function blockCommands(line: string): string[] {
  const body = line.replace(/^\s*\$\s+/, '').replace(/\s+#\s.*$/, '');
  return [...body.matchAll(COMMAND_START)].map((m) => body.slice((m.index ?? 0) + m[0].length));
}

export function readDoc(root: string, file: string): Doc {
  const doc: Doc = { file, anchors: new Set(), links: [], commands: [], inlineCode: [] };
  const seen = new Map<string, number>();
  let fence = false;
  readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const n = i + 1;
      if (/^\s*(```|~~~)/.test(line)) {
        fence = !fence;
        return;
      }
      if (fence) {
        for (const text of blockCommands(line)) doc.commands.push({ text, line: n });
        return;
      }
      const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
      if (h) {
        const base = slug(h[2]);
        const count = seen.get(base) ?? 0;
        seen.set(base, count + 1);
        doc.anchors.add(count ? `${base}-${count}` : base);
      }
      for (const m of line.replace(/`[^`]*`/g, '').matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) doc.links.push({ target: m[1], line: n });
      for (const m of line.matchAll(/`([^`]+)`/g)) {
        doc.inlineCode.push({ text: m[1], line: n });
        if (/^(sudo\s+)?rigd\s+[a-z]/.test(m[1])) doc.commands.push({ text: m[1].replace(/^sudo\s+/, ''), line: n });
      }
    });
  return doc;
}

/**
 * A command line split into its words up to where the command ends (a pipe, a redirection, `&&`,
 * `;`, a comment), without `rigd` itself.
 */
export function commandWords(text: string): string[] {
  const cut = text.replace(/^rigd\s+/, '').split(/\s(?:\||>|&&|;|#|<)\s|\s[|>]\s?|\s2>/)[0];
  return cut.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
}
