import type Joi from 'joi';

/**
 * What a route tells the API description beyond its joi `validate` and `response` settings: the
 * shapes it checks in its service instead of with joi, and its content types. Written next to the
 * route as `options.plugins.openapi`; never read at request time.
 */
export interface OpenApiRouteMeta {
  /** Request body shape, when the route checks the body in its service. */
  payload?: Joi.Schema;
  /** Query shape, when the route checks the query in its service. */
  query?: Joi.Schema;
  /** Content types of the request body. @default ['application/json'] */
  consumes?: string[];
  /** Content type of the success answer. @default 'application/json' */
  produces?: string;
  /** Other content types the success answer may take (e.g. text/csv on request), with their body shape. */
  alternatives?: Record<string, Joi.Schema>;
  /** Error statuses the route's service gives beyond those the description infers (input, login, path, body). */
  errors?: number[];
}

declare module '@hapi/hapi' {
  interface PluginSpecificConfiguration {
    openapi?: OpenApiRouteMeta;
  }
}
