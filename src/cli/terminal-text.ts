/**
 * Text for a terminal. Rig keys, serials, branches, projects, file errors and messages can hold any
 * character; on a terminal some of them are commands (ESC starts escape sequences that recolour,
 * move the cursor, retitle the window; BEL rings; CR overwrites the line; bidi overrides reorder
 * what follows). Every text renderer of the CLI (tables, Ink views, lines, error lines) passes data
 * through here, so such characters are shown visibly escaped and never reach the terminal raw:
 * C0 controls (tab and newline included), DEL and C1 as `\xHH`; the Unicode bidi controls and the
 * line and paragraph separators as `\uHHHH`. `--json` output needs none of this: JSON escapes them.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

function escape(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line of text with every control character visibly escaped (a newline too). */
export function terminalText(text: string): string {
  return text.replace(CONTROL, escape);
}

/** Text of several lines: each line escaped, the line breaks kept. */
export function terminalLines(text: string): string {
  return text.split('\n').map(terminalText).join('\n');
}

/** Writes lines to stdout, each escaped and ended with a newline. */
export function printLines(...lines: string[]): void {
  process.stdout.write(lines.map((l) => `${terminalText(l)}\n`).join(''));
}
