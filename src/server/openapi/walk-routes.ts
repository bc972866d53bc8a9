import type { RequestRoute, Server } from '@hapi/hapi';
import Joi from 'joi';
import type { OpenApiRouteMeta } from './route-meta.ts';
import './route-meta.ts';

/**
 * Which routes the API description covers: every route under /api/ (JSON, and the rig report's
 * form and text). Everything outside /api/ is not API and is left out: the HTML pages (/rigs,
 * /rigs/{id}, /map), static assets, /healthz and /metrics (operator probes, documented in the
 * README), and the embedded object store's S3 paths (/<bucket>/<key>, spoken by S3 clients).
 */
export const API_PREFIX = '/api/';

export function isDescribed(route: { path: string }): boolean {
  return route.path.startsWith(API_PREFIX);
}

/** One route as the description needs it, read off hapi's own settings. */
export interface RouteInfo {
  method: string;
  path: string;
  description?: string;
  notes?: string;
  tags: string[];
  /** Auth strategies; empty when the route needs no login. */
  strategies: string[];
  /** The VPN rule or viewer guard applies (403 for other clients). */
  guarded: boolean;
  errorFormat: 'json' | 'text' | 'html';
  params?: Joi.Schema;
  query?: Joi.Schema;
  payload?: Joi.Schema;
  headers?: Joi.Schema;
  /** 200 shape and other statuses' shapes from `response.schema` / `response.status`. */
  responses: Record<number, Joi.Schema>;
  meta: OpenApiRouteMeta;
}

function joiOf(value: unknown): Joi.Schema | undefined {
  return Joi.isSchema(value) ? (value as Joi.Schema) : undefined;
}

function routeInfo(route: RequestRoute): RouteInfo {
  const s = route.settings;
  const validate = (s.validate ?? {}) as Record<string, unknown>;
  const meta = s.plugins?.openapi ?? {};
  const response = (s.response ?? {}) as { schema?: unknown; status?: Record<string, unknown> };
  const responses: Record<number, Joi.Schema> = {};
  const ok = joiOf(response.schema);
  if (ok) responses[200] = ok;
  for (const [code, schema] of Object.entries(response.status ?? {})) {
    const j = joiOf(schema);
    if (j) responses[Number(code)] = j;
  }
  const auth = s.auth as { strategies?: string[]; mode?: string } | false | undefined;
  return {
    method: route.method.toUpperCase(),
    path: route.path,
    description: s.description,
    notes: Array.isArray(s.notes) ? s.notes.join('\n') : s.notes,
    tags: s.tags ?? [],
    strategies: auth ? (auth.strategies ?? []) : [],
    guarded: Boolean(s.app?.vpn),
    errorFormat: s.app?.errorFormat ?? 'json',
    params: joiOf(validate.params),
    query: joiOf(validate.query) ?? meta.query,
    payload: joiOf(validate.payload) ?? meta.payload,
    headers: joiOf(validate.headers),
    responses,
    meta,
  };
}

/** The described routes of a server, in path then method order. */
export function describedRoutes(server: Server): RouteInfo[] {
  return server
    .table()
    .filter((r) => isDescribed(r))
    .map(routeInfo)
    .sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path)));
}
