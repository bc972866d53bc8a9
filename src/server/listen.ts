import type Hapi from '@hapi/hapi';
import { CannotStart } from '../errors.ts';

/** Why a listen failed, in words, by errno code. Anything else is not the operator's to fix. */
const REASONS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)',
  EPERM: 'operation not permitted',
  EAFNOSUPPORT: 'address family not supported (IPv6 disabled?)',
  EINVAL: 'invalid address',
  ENOTFOUND: 'host name does not resolve',
  EAI_AGAIN: 'host name does not resolve (temporary failure)',
  EAI_FAIL: 'host name does not resolve',
  EAI_NONAME: 'host name does not resolve',
};

/** host:port as an operator writes it ([::]:3000 for IPv6). */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts listening. A socket that cannot be bound throws CannotStart naming the address and the
 * reason ("cannot listen on 0.0.0.0:3000: address already in use"); the server is left stopped.
 */
export async function listen(server: Hapi.Server, host: string, port: number): Promise<void> {
  try {
    await server.start();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    await server.stop({ timeout: 0 }).catch(() => undefined);
    const reason = code ? REASONS[code] : undefined;
    if (!code || !reason) throw err;
    throw new CannotStart(`cannot listen on ${hostPort(host, port)}: ${reason}`, code);
  }
}
