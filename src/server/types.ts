import type { RequestRoute } from '@hapi/hapi';
import type { Logger as PinoLogger } from 'pino';
import type { Address } from './client-address.ts';
import type { VpnMode } from './ext/vpn-guard.ts';
import type { Arrival } from './ext/request-deadline.ts';

declare module '@hapi/hapi' {
  interface RouteOptionsApp {
    /** Value of the Vary header on this route's JSON answers. @default 'Origin' */
    vary?: string;
    /** How errors of this route are written. @default 'json' */
    errorFormat?: 'json' | 'text' | 'html';
    /** Network guard (ext/vpn-guard.ts): 'rig' = the VPN rule, 'viewer' = VPN or loopback clients. @default none */
    vpn?: VpnMode;
    /**
     * A route taking uploads: no total time limit for receiving the request (ext/request-deadline.ts),
     * its own idle timeout instead. @default false
     */
    upload?: boolean;
    /**
     * false: the route checks its own text values (ext/text-fields.ts leaves it alone); the embedded
     * store's object routes, whose errors are S3's XML. @default true
     */
    textFields?: boolean;
    /**
     * false: lines logged while serving this route's requests carry no request id unless they name
     * it themselves (src/log/request-scope.ts); the rig report's path runs without AsyncLocalStorage.
     * @default true
     */
    logScope?: boolean;
  }
  interface Request {
    /** The server's pino logger (ext/request-log.ts); lines logged while serving carry the request id. */
    logger: PinoLogger;
  }
  interface Server {
    logger: PinoLogger;
  }
  interface RequestApplicationState {
    requestId: string;
    startedAt: bigint;
    /**
     * The client's address as every rule sees it (X-Forwarded-For only from server.trusted_proxies),
     * computed once on arrival (ext/request-context.ts); null when it cannot be read.
     */
    client: Address | null;
    /** The route the request will reach (null: none), found on arrival (ext/request-context.ts). */
    route?: RequestRoute | null;
    /** While its body may still be arriving: its link in the deadline's watch list (ext/request-deadline.ts). */
    arrival?: Arrival;
  }
}
