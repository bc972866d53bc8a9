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
import type { Request, Server } from '@hapi/hapi';
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

/** A request that may still be arriving: a link of the watch list (request.app.arrival). */
export interface Arrival {
  req: IncomingMessage;
  res: ServerResponse;
  /** When it began (ms since the epoch). */
  since: number;
  prev: Arrival | null;
  next: Arrival | null;
}

/**
 * The requests that may still be arriving, as a list whose removed links are cut (as node's own
 * timer lists do), not a Map. Every report is added on arrival and removed when answered; a Map
 * that churns like that keeps each hash table it leaves behind linked to its successor (for
 * iterators), and once one such table had been promoted to V8's old generation, it held the next
 * table, and through it every request, response and header string in it, alive through every
 * young-generation collection until the next full one: each report's state was promoted, and
 * scavenges took four times as long (docs/perf/report-path.md#garbage-per-report-measured). A
 * removed link here points nowhere, so a promoted one keeps nothing newer alive.
 */
class Arrivals {
  #head: Arrival | null = null;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(req: IncomingMessage, res: ServerResponse, since: number): Arrival {
    const a: Arrival = { req, res, since, prev: null, next: this.#head };
    if (this.#head) this.#head.prev = a;
    this.#head = a;
    this.#size++;
    return a;
  }

  /** Unlinks `a` (once; a second call does nothing) and cuts its links. */
  remove(a: Arrival): void {
    if (a.prev === null && this.#head !== a) return;
    if (a.prev) a.prev.next = a.next;
    else this.#head = a.next;
    if (a.next) a.next.prev = a.prev;
    a.prev = a.next = null;
    this.#size--;
  }

  /** Each arrival in turn; the one handed out may be removed meanwhile. */
  *[Symbol.iterator](): Generator<Arrival> {
    for (let a = this.#head; a !== null; ) {
      const next = a.next;
      yield a;
      a = next;
    }
  }

  clear(): void {
    for (const a of this) this.remove(a);
  }
}

export function registerRequestDeadline(server: Server, opts: DeadlineOptions = {}): void {
  const limitMs = opts.limitMs ?? REQUEST_TIMEOUT_MS;
  const checkEveryMs = opts.checkEveryMs ?? 30_000;
  server.listener.requestTimeout = 0;
  const arriving = new Arrivals();
  let timer: NodeJS.Timeout | null = null;
  const forget = (request: Request) => {
    const a = request.app.arrival;
    if (!a) return;
    arriving.remove(a);
    request.app.arrival = undefined;
  };

  const check = () => {
    const cutoff = Date.now() - limitMs;
    for (const a of arriving) {
      const { req, res, since } = a;
      if (req.complete || req.destroyed) arriving.remove(a);
      else if (since <= cutoff) {
        arriving.remove(a);
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
        request.app.arrival = arriving.add(req, res, request.info.received);
        timer ??= setInterval(check, checkEveryMs).unref();
      }
      return h.continue;
    },
    { after: [EXT.context] },
  );
  // Routing is done here: an upload route's request is no longer this bound's business.
  server.ext('onPreAuth', (request, h) => {
    if (request.route.settings.app?.upload) forget(request);
    return h.continue;
  });
  // A body that arrived whole no longer needs watching; one still arriving after the answer stays bounded.
  server.events.on('response', (request) => {
    if (request.raw.req.complete) forget(request);
  });
  server.events.on('stop', () => {
    if (timer) clearInterval(timer);
    timer = null;
    arriving.clear();
  });
}
