// Building blocks of the /v1 JSON Schemas (2020-12). These schemas are the one description of
// each /v1 operation: /v1/openapi.json serves them and the routes validate bodies with them. They
// check the shape only (types, required and unknown fields, enums); ranges and cross-field rules
// are the use cases' (their limits are named in the descriptions).

import { noNulPattern } from '@mint/http';

/** A JSON Schema. */
export type Schema = Readonly<Record<string, unknown>>;

/** A reference to a component schema of the document. */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
/** The document pointer of a component schema, for validation. */
export const componentPointer = (name: string): string => `#/components/schemas/${name}`;

export const uuid: Schema = { type: 'string', format: 'uuid' };
export const time: Schema = { type: 'string', format: 'date-time' };
export const integer: Schema = { type: 'integer' };
export const boolean: Schema = { type: 'boolean' };
export const string: Schema = { type: 'string' };
/** Free text of a request: any string without NUL. */
export const text: Schema = { type: 'string', pattern: noNulPattern };

/** `schema` or null (a type list, so a wrong value gets one plain message). */
export function nullable(schema: Schema): Schema {
  if (typeof schema['type'] === 'string') return { ...schema, type: [schema['type'], 'null'] };
  if (Array.isArray(schema['enum'])) return { ...schema, enum: [...(schema['enum'] as unknown[]), null] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** An object with exactly these properties; all required unless `required` says otherwise. */
export const obj = (properties: Record<string, Schema>, required: readonly string[] = Object.keys(properties)): Schema => ({
  type: 'object',
  properties,
  required: [...required],
  additionalProperties: false,
});
/** The object schema of the properties `names` of the object schema `schema`, in that order, required where `schema` requires them. */
export function pick(schema: Schema, names: readonly string[]): Schema {
  const properties = schema['properties'] as Record<string, Schema>;
  const required = schema['required'] as readonly string[];
  return obj(
    Object.fromEntries(names.map((name) => [name, properties[name]!])),
    names.filter((name) => required.includes(name)),
  );
}
export const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
export const oneOfEnum = (values: readonly string[]): Schema => ({ enum: [...values] });
