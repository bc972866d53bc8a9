/**
 * storage.minio.endpoint and storage.minio.port together, as operators write them:
 *   - a bare host ("minio.internal", "[::1]") is reached on `port` (default 9000), over TLS when use_ssl;
 *   - host:port names its port;
 *   - a URL with a scheme and no port ("https://minio.example") means the scheme's port (443, 80),
 *     unless `port` is set explicitly (in the file, the environment or a flag): then `port` says which;
 *   - a URL (or host:port) naming a port, with `port` set explicitly to another, is refused at load;
 *   - a URL's scheme says whether TLS is used: `use_ssl` set explicitly against it is refused at load.
 * After this rule `port` holds the port rigd connects to.
 */
import type { CustomHelpers } from 'joi';
import { KeyedProblem } from './rules.ts';

interface MinioSection {
  endpoint: string;
  port: number;
  use_ssl: boolean;
}

const SCHEME_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The port the endpoint names itself (written, or its scheme's), or null when it leaves that to `port`. */
function endpointPort(endpoint: string): { port: number; written: boolean } | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) {
    const url = new URL(endpoint); // the endpoint rule has checked it parses
    return url.port === '' ? { port: SCHEME_PORT[url.protocol] ?? 0, written: false } : { port: Number(url.port), written: true };
  }
  const m = /(?:^[^:[\]]+|\]):(\d+)$/.exec(endpoint);
  return m ? { port: Number(m[1]), written: true } : null;
}

/** Joi custom rule for the storage.minio section: resolves `port` (see above). */
export function resolveMinioPort<T extends MinioSection>(value: T, helpers: CustomHelpers): T {
  const original = helpers.original as Partial<Record<keyof MinioSection, unknown>> | undefined;
  const given = (key: keyof MinioSection) => original !== null && typeof original === 'object' && original[key] !== undefined;
  const portSet = given('port');
  const scheme = /^(https?):\/\//i.exec(value.endpoint)?.[1]?.toLowerCase();
  if (scheme && given('use_ssl') && value.use_ssl !== (scheme === 'https')) {
    throw new KeyedProblem(
      'storage.minio.use_ssl',
      value.use_ssl,
      `contradicts storage.minio.endpoint ${JSON.stringify(value.endpoint)} (an ${scheme} URL) (expected use_ssl left out: the URL's scheme says it)`,
    );
  }
  const named = endpointPort(value.endpoint);
  if (!named) return value;
  if (portSet && named.written && named.port !== value.port) {
    throw new KeyedProblem(
      'storage.minio.port',
      value.port,
      `contradicts storage.minio.endpoint ${JSON.stringify(value.endpoint)} (port ${named.port}) (expected the same port in both, or storage.minio.port left out)`,
    );
  }
  if (portSet && !named.written) return value;
  return { ...value, port: named.port };
}
