/**
 * The key a username or email is unique by and looked up by: Unicode NFC, then lower case. The
 * same name typed with precomposed or combining accents ("é" or "e" + U+0301) is one key.
 */
export function loginKey(text: string): string {
  return text.normalize('NFC').toLowerCase();
}
