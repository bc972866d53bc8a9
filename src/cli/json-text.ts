/**
 * JSON for a terminal (`--json`, `--watch --json`). JSON.stringify escapes C0 controls but writes
 * DEL, C1 controls (U+009B is CSI to many terminals), bidi controls, zero-width characters and the
 * line separators raw: piped to a terminal they would still act on it or hide. Here those are
 * written as `\uXXXX` escapes, which parse back to the exact same string; nothing else changes.
 * They can stand only inside JSON strings, where such an escape is always valid.
 */
const HIDDEN = /[\u007f-\u009f\u2028\u2029]|\p{Default_Ignorable_Code_Point}/gu;

function escape(c: string): string {
  let out = '';
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** JSON.stringify(value, null, space), with the characters above escaped. */
export function jsonText(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(HIDDEN, escape);
}
