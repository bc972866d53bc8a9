/**
 * Text for a terminal. Rig keys, serials, branches, projects, file errors and messages can hold any
 * character; on a terminal some of them are commands (ESC starts escape sequences that recolour,
 * move the cursor, retitle the window; BEL rings; CR overwrites the line; bidi overrides reorder
 * what follows), and some show as nothing (a serial "S1" followed by one looks like another rig's
 * "S1"). Every text renderer of the CLI (tables, Ink views, lines, error lines) passes data
 * through here, so such characters are shown visibly escaped and never reach the terminal raw:
 * C0 controls (tab and newline included), DEL and C1 as `\xHH`; the line and paragraph separators
 * and every default-ignorable character (bidi controls, zero-width characters, Hangul fillers,
 * variation selectors, tag characters) as `\uHHHH` or `\u{HHHHH}`. The emoji presentation
 * selectors stay after an emoji and in a keycap, where they are what the sender meant and change
 * how the emoji is drawn. `--json` output needs none of this: JSON escapes what it must and keeps
 * the rest exact.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u2028\u2029]|(?<!\p{Extended_Pictographic})[\ufe0e\ufe0f](?!\u20e3)|(?![\ufe0e\ufe0f])\p{Default_Ignorable_Code_Point}/gu;

function escape(c: string): string {
  const code = c.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
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
