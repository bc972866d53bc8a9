/**
 * The Content-Security-Policy of rigd's HTML pages. Rig-sent text is escaped by the templates; this
 * is the second wall should an escape ever be missed: script runs only from rigd's own files (no
 * inline script, no event-handler attributes, no `javascript:` URLs, no eval), no plugins, no
 * <base> rewrite, forms post only to rigd, pages framed only by rigd, fetches go only to rigd.
 * Styles may be inline (the error pages carry theirs; Leaflet positions tiles and markers with
 * style attributes). Images come from rigd, `data:` URLs and the configured tile server.
 */

/**
 * The image source of a tile URL template (`page.map_tiles_url`): its scheme and host, a `{s}`
 * subdomain as `*.`; a `{s}` anywhere else in the host allows the scheme's whole web.
 */
export function tileImageSource(template: string): string | null {
  if (!template) return null;
  const match = /^(https?):\/\/([^/?#:]+)(:\d+)?/i.exec(template);
  if (!match) return null;
  const [, scheme, host, port = ''] = match;
  if (!host.includes('{')) return `${scheme.toLowerCase()}://${host}${port}`;
  if (/^\{s\}\.[^{}]+$/.test(host)) return `${scheme.toLowerCase()}://*.${host.slice('{s}.'.length)}${port}`;
  return `${scheme.toLowerCase()}:`;
}

/** The policy for pages, given the configured tile URL template ('' for none). */
export function contentSecurityPolicy(tilesUrl: string): string {
  const tiles = tileImageSource(tilesUrl);
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data:${tiles ? ` ${tiles}` : ''}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}
