import { maxHeaderSize, type Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { failure } from './envelope.ts';

/** hapi's answer to a request Node's parser refused: a status line and nothing else. */
const BARE_400 = 'HTTP/1.1 400 Bad Request\r\n\r\n';

/** What the parser's error codes mean, said to the client. */
const REASONS: Record<string, string> = {
  HPE_INVALID_METHOD: 'the request method is not one HTTP knows',
  HPE_INVALID_URL: 'the request target is not a valid path',
  HPE_INVALID_VERSION: 'the HTTP version is not valid',
  HPE_INVALID_CONTENT_LENGTH: 'the Content-Length header is not a number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding are both given',
  HPE_INVALID_TRANSFER_ENCODING: 'the Transfer-Encoding header is not valid',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds characters HTTP does not allow',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size of the body is not valid',
  HPE_LF_EXPECTED: 'a line of the request does not end as HTTP requires',
  HPE_CR_EXPECTED: 'a line of the request does not end as HTTP requires',
};

/** The answer, with a JSON body that says what is wrong; the connection closes after it. */
export function clientErrorResponse(code: string | undefined): string {
  const tooLarge = code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const body = JSON.stringify(
    tooLarge
      ? failure('headers_too_large', `the request headers are too large (at most ${maxHeaderSize} bytes in all)`)
      : failure('malformed_request', `the request is not well-formed HTTP: ${REASONS[code ?? ''] ?? 'it cannot be parsed'}`),
  );
  return (
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\nx-content-type-options: nosniff\r\n` +
    `cache-control: no-cache\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/**
 * A request Node's HTTP parser refuses (headers too large, a malformed request line or header)
 * reaches no route and no extension: hapi's listener answers it with a bare "400 Bad Request" and
 * no body. Around hapi's listener, that answer is swapped for one that says what is wrong (431 for
 * headers too large). hapi's handling is otherwise untouched: a refusal in the middle of a request
 * it is serving still goes through the request lifecycle (ext/errors.ts).
 */
export function registerClientErrors(listener: HttpServer): void {
  const original = new WeakMap<Duplex, Duplex['end']>();
  listener.prependListener('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const end = socket.end;
    original.set(socket, end);
    socket.end = function (this: Duplex, ...args: unknown[]) {
      const [chunk] = args;
      if (Buffer.isBuffer(chunk) && chunk.toString('latin1') === BARE_400) args[0] = clientErrorResponse(err.code);
      return (end as (...a: unknown[]) => Duplex).apply(this, args);
    } as Duplex['end'];
  });
  // After hapi's listener: the socket's own end() back.
  listener.on('clientError', (_err: Error, socket: Duplex) => {
    const end = original.get(socket);
    if (end) socket.end = end;
    original.delete(socket);
  });
}
