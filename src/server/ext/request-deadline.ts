/**
 * How long a request may take to arrive. Node's http server cuts every request not received whole
 * within its requestTimeout (300 s): right for a JSON body, wrong for an upload over a slow link,
 * which may take longer while its bytes keep coming, and worse, Node reports the cut as a client
 * error that leaves the request's body stream open, so an upload cut that way never ended. Node
 * cannot exempt one route, so its requestTimeout is off, and this puts the same bound back on every
 * request except those of upload routes (`options.app.upload`), which end on their own idle timeout.
 * Headers stay bounded by Node's headersTimeout; request bodies a route parses, by hapi's payload
 * timeout as well.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@hapi/hapi';
import { EXT } from './names.ts';

/** Node's own default. */
export const REQUEST_TIMEOUT_MS = 300_000;

const TIMED_OUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

export interface DeadlineOptions {
  /** How long a request (headers and body) may take to arrive. */
  limitMs?: number;
  /** How often requests are checked (Node checks every 30 s). */
  checkEveryMs?: number;
}

export function registerRequestDeadline(server: Server, opts: DeadlineOptions = {}): void {
  const limitMs = opts.limitMs ?? REQUEST_TIMEOUT_MS;
  const checkEveryMs = opts.checkEveryMs ?? 30_000;
  server.listener.requestTimeout = 0;
  /** Requests that may still be arriving, with the time each began and its response. */
  const arriving = new Map<IncomingMessage, { since: number; res: ServerResponse }>();
  let timer: NodeJS.Timeout | null = null;

  const check = () => {
    const cutoff = Date.now() - limitMs;
    for (const [req, { since, res }] of arriving) {
      if (req.complete || req.destroyed) arriving.delete(req);
      else if (since <= cutoff) {
        arriving.delete(req);
        const { socket } = req;
        if (!res.headersSent && socket.writable) socket.end(TIMED_OUT, () => socket.destroy());
        else socket.destroy();
      }
    }
    if (arriving.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  server.ext(
    'onRequest',
    (request, h) => {
      const { req, res } = request.raw;
      if (!req.complete) {
        arriving.set(req, { since: request.info.received, res });
        timer ??= setInterval(check, checkEveryMs).unref();
      }
      return h.continue;
    },
    { after: [EXT.context] },
  );
  // Routing is done here: an upload route's request is no longer this bound's business.
  server.ext('onPreAuth', (request, h) => {
    if (request.route.settings.app?.upload) arriving.delete(request.raw.req);
    return h.continue;
  });
  // A body that arrived whole no longer needs watching; one still arriving after the answer stays bounded.
  server.events.on('response', (request) => {
    if (request.raw.req.complete) arriving.delete(request.raw.req);
  });
  server.events.on('stop', () => {
    if (timer) clearInterval(timer);
    timer = null;
    arriving.clear();
  });
}
