/**
 * A small checker of a JSON value against an OpenAPI 3.0 schema object: type (with nullable), enum,
 * properties, required, additionalProperties: false, items, anyOf, minLength/maxLength, minimum/maximum,
 * format date-time, and local $refs. Enough for the shapes rigd's description uses; anything else
 * in a schema is reported, so a shape the checker cannot judge never passes silently.
 */
type Schema = Record<string, unknown>;

const KNOWN = new Set([
  'type', 'nullable', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'anyOf',
  'minLength', 'maxLength', 'minimum', 'maximum', 'format', 'description', 'pattern', '$ref', 'default', 'maxItems', 'minItems',
]);

function resolve(doc: Schema, ref: string): Schema {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, key) => (node as Schema)[key], doc) as Schema;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Problems of `value` against `schema` (empty when it conforms), each naming its path. */
export function schemaProblems(doc: Schema, schema: Schema, value: unknown, at = '$'): string[] {
  if (typeof schema.$ref === 'string') return schemaProblems(doc, resolve(doc, schema.$ref), value, at);
  const unknown = Object.keys(schema).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) return [`${at}: schema keywords the checker does not know: ${unknown.join(', ')}`];
  if (value === null) return schema.nullable === true || (schema.type === undefined && !schema.anyOf) ? [] : anyOfNull(doc, schema, at);
  const problems: string[] = [];
  if (Array.isArray(schema.anyOf)) {
    const fits = (schema.anyOf as Schema[]).some((s) => schemaProblems(doc, s, value, at).length === 0);
    if (!fits) problems.push(`${at}: matches none of anyOf`);
  }
  const actual = typeOf(value);
  if (typeof schema.type === 'string') {
    const ok = schema.type === actual || (schema.type === 'number' && actual === 'integer');
    if (!ok) return [...problems, `${at}: expected ${schema.type}, got ${actual}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) problems.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) problems.push(`${at}: longer than ${schema.maxLength}`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) problems.push(`${at}: does not match ${schema.pattern}`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) problems.push(`${at}: not a date-time`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) problems.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) problems.push(`${at}: above ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => problems.push(...schemaProblems(doc, schema.items as Schema, item, `${at}[${i}]`)));
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const name of (schema.required ?? []) as string[]) if (!(name in obj)) problems.push(`${at}.${name}: required, missing`);
    for (const [name, v] of Object.entries(obj)) {
      if (props[name]) problems.push(...schemaProblems(doc, props[name], v, `${at}.${name}`));
      else if (schema.additionalProperties === false) problems.push(`${at}.${name}: not in the schema`);
    }
  }
  return problems;
}

function anyOfNull(doc: Schema, schema: Schema, at: string): string[] {
  if (Array.isArray(schema.anyOf) && (schema.anyOf as Schema[]).some((s) => schemaProblems(doc, s, null, at).length === 0)) return [];
  return [`${at}: null where the schema does not allow it`];
}
