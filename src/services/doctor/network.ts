/**
 * Doctor's network checks: rigd serve answers on the configured address, and the host name rigs
 * upload to resolves from here. Both only read (a GET of /healthz, a name lookup).
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { Config } from '../../config/schema.ts';
import { parseEndpoint } from '../../storage/urls.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';

const TIMEOUT_MS = 2000;

/** Where a client on this host reaches server.host: a wildcard address means loopback. */
export function localAddress(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A server listens on server.host:port and it is a healthy rigd (its /healthz says ok). */
export async function checkServer(server: Readonly<Config['server']>): Promise<Finding> {
  const host = localAddress(server.host);
  const url = `http://${net.isIPv6(host) ? `[${host}]` : host}:${server.port}/healthz`;
  const where = `${host}:${server.port}`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
    const code = cause?.code ?? (err as Error).name;
    if (code === 'ECONNREFUSED') {
      return warn('server', `nothing listens on ${where} (server.host, server.port): rigd serve is not running`, 'start it: systemctl start rigd; if it stops again, journalctl -u rigd -p err says why');
    }
    if (code === 'TimeoutError') {
      return fail('server', `${where} accepts connections but answers nothing within ${TIMEOUT_MS / 1000} s`, 'journalctl -u rigd -p warning; restart it: systemctl restart rigd');
    }
    return fail('server', `${url} cannot be reached: ${cause?.message ?? errorText(err)}`, 'check server.host (an address of this host) and server.port');
  }
  const body = (await res.json().catch(() => null)) as { status?: unknown; failing?: unknown } | null;
  if (res.status === 200 && body?.status === 'ok') return ok('server', `rigd serve answers on ${where}, /healthz ok`);
  if (res.status === 503 && body?.status === 'unavailable') {
    const failing = Array.isArray(body.failing) ? body.failing.join(', ') : 'a check';
    return fail('server', `rigd serve answers on ${where}, but /healthz fails: ${failing}`, 'see the lines of those checks here, and journalctl -u rigd -p err');
  }
  return fail('server', `${where} answers, but not as rigd (GET /healthz: HTTP ${res.status})`, 'another program holds that port: stop it, or set server.port to a free port');
}

/** The host name in the URLs rigs upload to (signed PUT URLs). */
export function uploadHost(config: Readonly<Config>): { host: string; from: string } {
  if (config.storage.driver === 'minio') {
    const m = config.storage.minio;
    const host = parseEndpoint(m.public_endpoint || m.endpoint, m.use_ssl).hostname;
    return { host: host.replace(/^\[|\]$/g, ''), from: m.public_endpoint ? 'storage.minio.public_endpoint' : 'storage.minio.endpoint' };
  }
  if (config.storage.public_url) return { host: new URL(config.storage.public_url).hostname.replace(/^\[|\]$/g, ''), from: 'storage.public_url' };
  return { host: config.vpn.host, from: 'vpn.host' };
}

/** The upload host resolves from here (a warning only: rigs resolve it through the VPN's DNS). */
export async function checkUploadHost(config: Readonly<Config>): Promise<Finding> {
  const { host, from } = uploadHost(config);
  if (net.isIP(host)) return ok('upload_host', `rigs upload to ${host} (${from}), an address`);
  try {
    const found = await withTimeout(lookup(host, { all: true }), TIMEOUT_MS, `looking up ${host}`);
    return ok('upload_host', `${host} (${from}, where rigs upload) resolves to ${found.map((a) => a.address).join(', ')}`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return warn(
      'upload_host',
      `${host} (${from}, where rigs upload) does not resolve from here (${code ?? errorText(err)})`,
      `make the VPN's DNS (and /etc/hosts here, e.g. "10.144.0.1 ${host}") resolve it to this gateway's VPN address, or set ${from} to that address`,
    );
  }
}
