import type { Readable } from 'node:stream';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import type { ReceivedPut } from '../../services/uploads/service.ts';
import { DEFAULT_CONTENT_TYPE, RESERVATION_PARAM, type EmbeddedStorage } from '../../storage/embedded.ts';
import { renderS3ErrorXml, S3Error } from '../../storage/s3-error.ts';

/** What is left of a refused body is read and dropped up to this much, so the client gets its answer. */
const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;
const DRAIN_LIMIT_MS = 5000;

/**
 * Reads and drops the rest of a refused request body. Closing a socket with unread bytes makes the
 * kernel reset the connection, which can destroy the error answer before the client reads it.
 * Past the limits the answer goes out anyway and the connection is closed.
 */
function drain(body: Readable): Promise<boolean> {
  if (body.readableEnded || body.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (complete: boolean) => {
      clearTimeout(timer);
      body.removeListener('data', onData);
      body.removeListener('end', onEnd);
      body.removeListener('error', onEnd);
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_LIMIT_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    const timer = setTimeout(() => finish(false), DRAIN_LIMIT_MS);
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onEnd);
    body.resume();
  });
}

function s3Error(h: ResponseToolkit, request: Request, store: EmbeddedStorage, key: string, err: S3Error) {
  return h
    .response(renderS3ErrorXml(err, store.resourcePath(key), request.app.requestId))
    .code(err.status)
    .type('application/xml');
}

function signed(request: Request, store: EmbeddedStorage, method: 'PUT' | 'GET' | 'HEAD', key: string): void {
  store.verifySignedRequest({
    method,
    bucket: store.bucket,
    key,
    query: request.query as Record<string, string | string[] | undefined>,
    host: request.headers.host as string | undefined,
    headers: request.headers as Record<string, string | undefined>,
  });
}

/**
 * Ties the upload to its connection while the handler reads it. No byte for the route's socket
 * timeout (storage.upload_idle_timeout_s) aborts the upload, which is then answered with S3's
 * RequestTimeout and the connection closed. When the response goes out or the connection closes
 * first (a reset, the server answering by itself, a stop), the body is destroyed. Either way the
 * store lets go of the upload at once: its slab, its file and its temp file.
 */
function tieToConnection(request: Request, body: Readable): { signal: AbortSignal; untie(): void } {
  const { req, res } = request.raw;
  const idle = new AbortController();
  const cut = () => {
    if (!body.readableEnded && !body.destroyed) body.destroy();
  };
  // Listening to the request's 'timeout' keeps Node from destroying the socket, so the answer can go out.
  const onIdle = () => idle.abort(new S3Error('RequestTimeout', 'Your socket connection to the server was not read from or written to within the timeout period.'));
  res.once('close', cut);
  req.once('timeout', onIdle);
  return {
    signal: idle.signal,
    untie: () => {
      res.removeListener('close', cut);
      req.removeListener('timeout', onIdle);
    },
  };
}

/** What the store needs from the request besides key and body. */
function putOf(request: Request): ReceivedPut {
  const reservation = request.query[RESERVATION_PARAM] as string | string[] | undefined;
  const length = request.headers['content-length'];
  const type = (request.headers['content-type'] as string | undefined)?.trim();
  return {
    reservation: reservation === undefined ? undefined : String(reservation),
    contentLength: length === undefined ? undefined : Number(length),
    contentType: type || undefined,
  };
}

/**
 * The embedded store's object URLs, path-style like MinIO's: `/<bucket>/<key>`, behind the VPN
 * rule, each request checked against its SigV4 query signature. Errors are S3's XML.
 */
export function objectRoutes(app: App, store: EmbeddedStorage): ServerRoute[] {
  const path = `/${store.bucket}/{key*}`;
  return [
    {
      method: 'PUT',
      path,
      options: {
        auth: false,
        app: { vpn: 'rig', upload: true, textFields: false },
        payload: {
          output: 'stream',
          parse: false,
          // Rigs and S3 clients send any Content-Type, or none: it is stored with the object and
          // returned on GET, never parsed. Hapi would hold it against the server-wide JSON-only
          // default; told that the body is bytes, it lets every type through.
          override: DEFAULT_CONTENT_TYPE,
          allow: DEFAULT_CONTENT_TYPE,
          // The limit is the reserved size (checked against Content-Length, then byte by byte), and
          // its refusal is S3's XML, which hapi's own limit would not give.
          maxBytes: Number.MAX_SAFE_INTEGER,
          timeout: false,
        },
        // No total time limit while bytes keep coming (a slow link may need many minutes); no byte
        // for storage.upload_idle_timeout_s closes the connection, and the upload with it.
        timeout: { socket: app.config.storage.upload_idle_timeout_s * 1000, server: false },
        handler: async (request, h) => {
          const key = String(request.params.key ?? '');
          const body = request.payload as Readable;
          const { signal, untie } = tieToConnection(request, body);
          try {
            signed(request, store, 'PUT', key);
            const info = await app.uploads.receive(key, body, { ...putOf(request), signal });
            return h.response('').code(200).header('etag', `"${info.etag}"`);
          } catch (err) {
            if (!(err instanceof S3Error)) throw err;
            // An idle client is not waited for again: the answer goes out and the connection closes.
            const drained = err.s3Code !== 'RequestTimeout' && (await drain(body));
            const res = s3Error(h, request, store, key, err);
            return drained ? res : res.header('connection', 'close');
          } finally {
            untie();
          }
        },
      },
    },
    {
      method: 'GET',
      path,
      options: {
        auth: false,
        app: { vpn: 'rig', textFields: false },
        handler: async (request, h) => {
          const key = String(request.params.key ?? '');
          try {
            signed(request, store, request.method === 'head' ? 'HEAD' : 'GET', key);
            const info = await store.stat(key);
            if (!info) throw new S3Error('NoSuchKey', 'The specified key does not exist.');
            const body = await store.read(key);
            const res = h
              .response(body)
              .type(info.contentType ?? DEFAULT_CONTENT_TYPE)
              .header('content-length', String(info.size))
              .header('etag', `"${info.etag}"`)
              .header('last-modified', info.lastModified.toUTCString());
            // The type given at PUT, exactly (hapi would add a charset to text types).
            res.charset(undefined);
            return res;
          } catch (err) {
            if (err instanceof S3Error) return s3Error(h, request, store, key, err);
            throw err;
          }
        },
      },
    },
  ];
}
