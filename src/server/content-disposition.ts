/**
 * `Content-Disposition: attachment` with a file name (RFC 6266): `filename` is an ASCII stand-in
 * (anything outside letters, digits, `.`, `-`, `_`, `+` and space becomes `_`), and `filename*`
 * (RFC 8187, UTF-8 percent-encoded) carries the exact name whenever the stand-in differs from it.
 */
export function attachment(filename: string): string {
  const ascii = filename.replace(/[^A-Za-z0-9._+ -]/g, '_');
  if (ascii === filename) return `attachment; filename="${ascii}"`;
  const exact = encodeURIComponent(filename).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
