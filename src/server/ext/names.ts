/**
 * rigd's request extensions, each registered by server.ts as a hapi plugin of this name, so that
 * `server.ext(point, method, { before, after })` can order them by name (hapi's own ordering of
 * extensions at one lifecycle point; without names they run in the order they were added).
 *
 * - onRequest: context (request id, start time, client address) first; deadline and VPN guard after it.
 * - onPreAuth: deadline, body limit. onPostAuth: JSON depth, text fields.
 * - onPreResponse: errors (an error becomes the route's error body), then headers (the JSON body,
 *   its ETag and the common headers), then body limit (Connection: close on the final answer).
 */
export const EXT = {
  context: 'rigd-request-context',
  deadline: 'rigd-request-deadline',
  vpnGuard: 'rigd-vpn-guard',
  errors: 'rigd-errors',
  headers: 'rigd-headers',
  jsonDepth: 'rigd-json-depth',
  textFields: 'rigd-text-fields',
  bodyLimit: 'rigd-body-limit',
} as const;
