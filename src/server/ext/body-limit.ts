/**
 * Request bodies over a route's `payload.maxBytes`, and every other answer given before the body
 * was read, end in an answer the client can read: 413 (in the route's error format) with
 * `Connection: close`, and the socket reads and drops a bounded rest of the body before it closes
 * ("lingering close"). Closing a socket with unread bytes makes the kernel send a reset, and a
 * client still writing its body then sees ECONNRESET instead of the answer; on a kept-alive
 * connection that was every oversized body.
 *
 * - A declared Content-Length over the limit is refused before auth and before anything is read.
 * - A streamed (chunked) body that passes the limit while being read is no longer destroyed by the
 *   reader: the rest is drained (bounded) and then answered.
 * - Beyond the bound (bytes or time) the socket is destroyed: an abusive sender gets no more.
 *
 * Routes whose handler takes the body as a stream (`payload.output: 'stream'`) manage their body
 * themselves and are left alone.
 */
import type { Request, Server } from '@hapi/hapi';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import Boom from '@hapi/boom';
import { EXT } from './names.ts';
import { TooLarge } from '../../errors.ts';

export interface LingerBounds {
  /** Most bytes read and dropped after the answer (or after the limit was passed). @default 8 MiB */
  bytes: number;
  /** Longest the socket stays open for them. @default 5000 */
  ms: number;
}

export const DEFAULT_LINGER: LingerBounds = { bytes: 8 * 1024 * 1024, ms: 5000 };

function routeLimit(request: Request): number | undefined {
  const payload = request.route.settings.payload as { maxBytes?: number; output?: string } | undefined | null;
  if (!payload || payload.output === 'stream') return undefined;
  return payload.maxBytes;
}

function tooLarge(limit: number): TooLarge {
  return new TooLarge(`the request body is larger than the limit of ${limit} bytes`, 'payload_too_large');
}

/**
 * Runs `stop` once more than `bounds.bytes` of the body have been read from now on, or `bounds.ms`
 * have passed; returns a function that cancels the watch.
 */
function watchBounds(req: IncomingMessage, bounds: LingerBounds, stop: () => void): () => void {
  let seen = 0;
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > bounds.bytes) stop();
  };
  const timer = setTimeout(stop, bounds.ms);
  timer.unref();
  const cancel = () => {
    clearTimeout(timer);
    req.off('data', onData);
  };
  req.on('data', onData);
  req.socket?.once('close', cancel);
  return cancel;
}

/**
 * When the server would close this socket after the answer (Node calls `destroySoon` for
 * `Connection: close`), it first reads and drops what the client still sends of this body, within
 * the bounds, and only then closes: the answer is already on its way, and a client that writes its
 * whole body before reading sees neither a FIN it cannot write past nor a reset.
 */
function lingerOnClose(request: Request, bounds: LingerBounds): void {
  const req = request.raw.req;
  const socket = req.socket as Socket | null;
  if (!socket || socket.destroyed || Object.prototype.hasOwnProperty.call(socket, 'destroySoon')) return;
  socket.destroySoon = () => {
    Reflect.deleteProperty(socket, 'destroySoon');
    if (req.complete) return socket.destroySoon();
    const cancel = watchBounds(req, bounds, () => socket.destroy());
    req.once('end', () => {
      cancel();
      socket.destroySoon();
    });
    // Node dumps an unread body after the answer; a body a reader paused is resumed here.
    req.resume();
  };
}

/**
 * A streamed body passing the limit makes the payload reader destroy the request, and with it the
 * socket, before any answer. Instead, the body is left to drain (within the bounds) and the 413
 * is written afterwards.
 */
function keepSocketOnOverflow(request: Request, bounds: LingerBounds): void {
  const req = request.raw.req;
  const destroy = req.destroy.bind(req);
  req.destroy = ((err?: Error) => {
    if (err !== undefined || req.complete || request.raw.res.headersSent) return destroy(err);
    req.destroy = destroy;
    const cancel = watchBounds(req, bounds, () => destroy());
    req.once('end', cancel);
    return req;
  }) as typeof req.destroy;
}

export function registerBodyLimit(server: Server, bounds: LingerBounds = DEFAULT_LINGER): void {
  server.ext('onPreAuth', (request, h) => {
    const limit = routeLimit(request);
    if (limit === undefined || request.method === 'get' || request.method === 'head') return h.continue;
    const declared: unknown = request.headers['content-length'];
    if (typeof declared === 'string') {
      if (/^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit);
    } else if (request.headers['transfer-encoding'] !== undefined) {
      keepSocketOnOverflow(request, bounds);
    }
    return h.continue;
  });

  server.ext(
    'onPreResponse',
    (request, h) => {
      const { response } = request;
      if (!response || (request.route.settings.payload as { output?: string } | null)?.output === 'stream') return h.continue;
      const status = Boom.isBoom(response) ? response.output.statusCode : response.statusCode;
      const unread = !request.raw.req.complete;
      if (status !== 413 && !unread) return h.continue;
      if (Boom.isBoom(response)) response.output.headers['connection'] = 'close';
      else response.header('connection', 'close');
      if (unread) lingerOnClose(request, bounds);
      return h.continue;
    },
    { after: [EXT.errors, EXT.headers] },
  );
}
