import type Joi from 'joi';
import joiToJson from 'joi-to-json';

// The package is CommonJS (`module.exports = parse`): its default import is the function itself,
// while its typings describe it as a `default` export.
const parse = joiToJson as unknown as typeof joiToJson.default;

/** An OpenAPI 3.0 schema object (JSON Schema with OpenAPI's `nullable`). */
export type SchemaObject = Record<string, unknown>;

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: SchemaObject;
}

/**
 * joi-to-json marks `Joi.alternatives(...).allow(null)` as `type: object` beside its anyOf, which
 * would refuse the alternatives' own types: the anyOf alone says what is allowed.
 */
function tidy(schema: unknown): void {
  if (Array.isArray(schema)) {
    for (const item of schema) tidy(item);
    return;
  }
  if (!schema || typeof schema !== 'object') return;
  const s = schema as SchemaObject;
  if (Array.isArray(s.anyOf) && s.type === 'object' && s.properties === undefined) delete s.type;
  for (const value of Object.values(s)) tidy(value);
}

/** A joi schema as an OpenAPI 3.0 schema (joi-to-json's `open-api` output). */
export function toSchema(joi: Joi.Schema): SchemaObject {
  const schema = parse(joi, 'open-api') as SchemaObject;
  tidy(schema);
  return schema;
}

/**
 * The keys of a joi object schema as parameters `in` path, query or header. Path parameters are
 * always required; header names are lower case, as hapi validates them.
 */
export function toParameters(joi: Joi.Schema, where: ParameterObject['in']): ParameterObject[] {
  const schema = toSchema(joi);
  const properties = (schema.properties ?? {}) as Record<string, SchemaObject>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

/** Names in a hapi path template: `{id}`, `{file*}`, `{name?}` give id, file, name. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)[*?]?\d*\}/g)].map((m) => m[1]!);
}
