import { BLOCKED_RESPONSE, ERROR_RESPONSE, TEXT_ERROR_RESPONSE, TOKEN_COOKIE, TOKEN_HEADER } from './components.ts';
import { pathParameterNames, toParameters, toSchema, type ParameterObject, type SchemaObject } from './convert-schema.ts';
import { API_PREFIX, type RouteInfo } from './walk-routes.ts';


/** `GET /api/v1/rigs/{id}/reports` gives getRigsByIdReports. */
export function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v\d+\//, '/')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(\w+)[*?]?\d*\}$/.exec(segment);
      const word = param ? `by_${param[1]}` : segment;
      return word
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
    });
  return method.toLowerCase() + words.join('');
}

/** The route's own tags (hapi's `options.tags`), else the first path segment after the version. */
export function tagsOf(route: RouteInfo): string[] {
  if (route.tags.length > 0) return route.tags;
  const first = route.path.slice(API_PREFIX.length).split('/').filter((s) => !/^v\d+$/.test(s))[0] ?? 'api';
  return [first];
}

function parameters(route: RouteInfo): ParameterObject[] {
  const declared = route.params ? toParameters(route.params, 'path') : [];
  const named = new Set(declared.map((p) => p.name));
  // Every name in the template is a parameter, checked or not (unchecked ones are strings).
  const implicit: ParameterObject[] = pathParameterNames(route.path)
    .filter((name) => !named.has(name))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  return [
    ...declared,
    ...implicit,
    ...(route.query ? toParameters(route.query, 'query') : []),
    ...(route.headers ? toParameters(route.headers, 'header') : []),
  ];
}

function successResponses(route: RouteInfo): Record<string, unknown> {
  const produces = route.meta.produces ?? 'application/json';
  const out: Record<string, unknown> = {};
  const ok = route.responses[200];
  const content: Record<string, { schema: SchemaObject }> = {
    [produces]: { schema: ok ? toSchema(ok) : produces === 'application/json' ? { type: 'object' } : { type: 'string' } },
  };
  for (const [type, schema] of Object.entries(route.meta.alternatives ?? {})) content[type] = { schema: toSchema(schema) };
  out['200'] = { description: 'OK', content };
  // Shapes per status (hapi's `response.status`) other than 200.
  for (const [code, schema] of Object.entries(route.responses)) {
    if (code !== '200') out[code] = { description: `Status ${code}`, content: { [produces]: { schema: toSchema(schema) } } };
  }
  return out;
}

function errorResponses(route: RouteInfo): Record<string, unknown> {
  const shared = route.errorFormat === 'text' ? TEXT_ERROR_RESPONSE : ERROR_RESPONSE;
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  const codes: number[] = [];
  const hasInput = route.params || route.query || route.payload || route.headers || pathParameterNames(route.path).length > 0;
  if (hasInput) codes.push(400);
  if (route.strategies.length > 0) codes.push(401);
  if (pathParameterNames(route.path).length > 0) codes.push(404);
  if (route.payload) codes.push(413, 415);
  codes.push(...(route.meta.errors ?? []), 503);
  const out: Record<string, unknown> = {};
  for (const code of [...new Set(codes)].sort((a, b) => a - b)) out[String(code)] = ref(shared);
  if (route.guarded) out['403'] = ref(BLOCKED_RESPONSE);
  out.default = ref(shared);
  return out;
}

/** One OpenAPI operation object for a route. */
export function operation(route: RouteInfo): Record<string, unknown> {
  const params = parameters(route);
  const consumes = route.meta.consumes ?? ['application/json'];
  const body = route.payload ? toSchema(route.payload) : undefined;
  return {
    operationId: operationId(route.method, route.path),
    summary: route.description ?? `${route.method} ${route.path}`,
    ...(route.notes ? { description: route.notes } : {}),
    tags: tagsOf(route),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body ? { requestBody: { required: true, content: Object.fromEntries(consumes.map((type) => [type, { schema: body }])) } } : {}),
    responses: { ...successResponses(route), ...errorResponses(route) },
    security: route.strategies.length > 0 ? [{ [TOKEN_HEADER]: [] }, { [TOKEN_COOKIE]: [] }] : [],
  };
}
