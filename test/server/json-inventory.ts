/**
 * Every route rigd registers, by what it answers (docs/http-api.md#json-routes keeps the same list):
 * - seed: the interface's routes (shapes fixed by the interface, not rigd's envelope);
 * - own-json: rigd's own JSON routes: the envelope {success, data} / {success: false, error};
 * - document: the OpenAPI document (a standard format, read by tools as it is);
 * - probe: /healthz, its own small body for load balancers and systemd (status code first);
 * - other: HTML pages, redirects, CSV/NDJSON streams, Prometheus text, S3 objects, static files.
 */
export type RouteKind = 'seed' | 'own-json' | 'document' | 'probe' | 'other';

export const INVENTORY: Record<string, RouteKind> = {
  'POST /api/v1/sessions': 'seed',
  'PUT /api/v1/users/{id}': 'seed',
  'GET /api/v1/rigs/upload': 'seed',
  'PUT /api/v1/rigs/{id}': 'seed',
  'POST /api/v1/webhooks/capture_uploaded': 'seed',
  'GET /rigs': 'seed',

  'DELETE /api/v1/sessions': 'own-json',
  'GET /api/v1/rigs': 'own-json',
  'GET /api/v1/rigs/{id}': 'own-json',
  'GET /api/v1/rigs/{id}/reports': 'own-json',
  'GET /api/v1/captures': 'own-json',
  'GET /api/v1/captures/{id}': 'own-json',
  'GET /map/rigs.json': 'own-json',

  'GET /api/v1/openapi.json': 'document',
  'GET /healthz': 'probe',

  'GET /api/v1/captures/{id}/tables/{table}': 'other',
  'GET /': 'other',
  'GET /rigs/{id}': 'other',
  'GET /map': 'other',
  'GET /metrics': 'other',
  'GET /login': 'other',
  'POST /login': 'other',
  'POST /logout': 'other',
  'GET /assets/{file*}': 'other',
  'GET /assets/leaflet/{file*}': 'other',
  'GET /assets/leaflet.markercluster/{file*}': 'other',
  'GET /assets/topojson-client/{file*}': 'other',
  'GET /assets/world/countries-110m.json': 'other',
  'PUT /captures/{key*}': 'other',
  'GET /captures/{key*}': 'other',
};
