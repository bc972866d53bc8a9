// What a teardown can assert about the server it stopped: it no longer listens, and its address
// refuses connections.
import { connect } from 'node:net';
import type { Test } from 'tape';
import type { TestServer } from './server.ts';

/** The error code of a TCP connection to `url`'s host and port ('connected' when one was accepted). */
export function connectOutcome(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Stops the test server and asserts it is stopped: not listening, its address refusing connections. */
export async function closeServer(t: Test, s: TestServer): Promise<void> {
  await s.close();
  t.notOk(s.server.listener.listening, 'the server no longer listens');
  t.equal(await connectOutcome(s.url), 'ECONNREFUSED', `${s.url} refuses connections`);
}
