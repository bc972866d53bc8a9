/**
 * A value as it can be typed after a rigd command in a POSIX shell: plain word characters as they
 * are, anything else single-quoted ('it'\''s'). For messages that name the next command to run.
 */
export function shellWord(value: string): string {
  return /^[\w./:@+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
