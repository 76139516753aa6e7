// Request validation from JSON Schemas (2020-12, as an OpenAPI 3.1 document carries them),
// compiled once with ajv. Violations are named by their path in the request (`lots[0].qty`) with
// the same plain messages everywhere, and reported all at once as one InvalidInputError.

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { InvalidInputError, isUuid, type FieldViolation } from '@mint/domain';

type Schema = Readonly<Record<string, unknown>>;

/** The pattern of a text field that must not carry NUL (PostgreSQL text cannot hold it). */
export const noNulPattern = '^[^\\u0000]*$';

/** ISO 8601 timestamps as the API accepts them: a date, `T`, and a time `Date` can read. */
function isTimestamp(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(new Date(value).getTime());
}

/** Validates values against the schemas of one document. */
export interface SchemaValidator {
  /**
   * Checks `value` against the schema at `pointer` in the document (e.g.
   * `#/components/schemas/MintJobRequest`) and returns it typed; throws one InvalidInputError
   * naming every violation otherwise.
   */
  check<T>(pointer: string, value: unknown): T;
}

/**
 * Compiles the schemas of `document` (their `$ref`s point into it) once per pointer, on first
 * use. Formats: `uuid` (textual uuid), `date-time` (ISO 8601, read by `Date`).
 */
export function createSchemaValidator(document: Schema): SchemaValidator {
  const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true });
  ajv.addFormat('uuid', { type: 'string', validate: (v: string) => isUuid(v) });
  ajv.addFormat('date-time', { type: 'string', validate: isTimestamp });
  ajv.addSchema({ ...document, $id: 'document' });
  const compiled = new Map<string, ValidateFunction>();
  return {
    check<T>(pointer: string, value: unknown): T {
      let validate = compiled.get(pointer);
      if (validate === undefined) {
        validate = ajv.compile({ $ref: `document${pointer}` });
        compiled.set(pointer, validate);
      }
      if (!validate(value)) {
        const order = Object.keys((schemaAt(document, pointer)?.['properties'] as object | undefined) ?? {});
        throw new InvalidInputError(violationsOf(validate.errors ?? [], order));
      }
      return value as T;
    },
  };
}

/** `/lots/0/qty` -> `lots[0].qty`. */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`), '');
}

/** `{lot_code, qty}`: the shape of an object schema, for messages. */
function shapeOf(schema: unknown): string | null {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties === undefined ? null : `{${Object.keys(properties).join(', ')}}`;
}

/** The plain message of one ajv error, or null for errors that only summarise others. */
function messageOf(e: ErrorObject): string | null {
  const schema = e.parentSchema as Record<string, unknown> | undefined;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return `is not a known field; allowed: ${Object.keys((schema?.['properties'] as object | undefined) ?? {}).join(', ')}`;
    case 'type': {
      const types = ([] as string[]).concat(e.params['type'] as string | string[]).filter((t) => t !== 'null');
      if (types.includes('array')) {
        const shape = shapeOf(schema?.['items']);
        return shape === null ? 'must be an array' : `must be an array of ${shape}`;
      }
      if (types.includes('object')) {
        const shape = shapeOf(schema);
        return shape === null ? 'must be an object' : `must be an object ${shape}`;
      }
      return `must be ${types[0] === 'integer' ? 'an integer' : `a ${types[0]}`}`;
    }
    case 'format':
      return e.params['format'] === 'uuid' ? 'must be a uuid string' : 'must be an ISO 8601 timestamp';
    case 'enum':
      return `must be one of ${(e.params['allowedValues'] as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(e.params['allowedValue'])}`;
    case 'pattern':
      return e.params['pattern'] === noNulPattern ? 'must not contain the NUL character (U+0000)' : `must match ${e.params['pattern'] as string}`;
    case 'maxLength':
      return `must be at most ${e.params['limit'] as number} characters`;
    case 'minLength':
      return `must be at least ${e.params['limit'] as number} characters`;
    case 'maxItems':
      return `must have at most ${e.params['limit'] as number} entries`;
    case 'minimum':
    case 'maximum':
      return `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${e.params['limit'] as number}`;
    default:
      return null;
  }
}

/**
 * The violations of a failed check, one per field (the first message wins), ordered as a reader
 * scans the request: unknown fields first, then the fields in the schema's declared `order`.
 */
function violationsOf(errors: readonly ErrorObject[], order: readonly string[]): FieldViolation[] {
  const byField = new Map<string, { message: string; rank: number }>();
  for (const e of errors) {
    const message = messageOf(e);
    if (message === null) continue;
    const child =
      e.keyword === 'required'
        ? (e.params['missingProperty'] as string)
        : e.keyword === 'additionalProperties'
          ? (e.params['additionalProperty'] as string)
          : undefined;
    const field = fieldPath(e.instancePath, child) || 'body';
    if (byField.has(field)) continue;
    const top = field.split(/[.[]/, 1)[0]!;
    const declared = order.indexOf(top);
    const rank = e.keyword === 'additionalProperties' && e.instancePath === '' ? -1 : declared < 0 ? order.length : declared;
    byField.set(field, { message, rank });
  }
  return [...byField.entries()]
    .map(([field, v], i) => ({ field, message: v.message, rank: v.rank, i }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map(({ field, message }) => ({ field, message }));
}

/** The schema at a `#/a/b` pointer of `document`, following one `$ref` inside it. */
function schemaAt(document: Schema, pointer: string): Schema | undefined {
  const at = (p: string): Schema | undefined =>
    p
      .replace(/^#\/?/, '')
      .split('/')
      .filter((s) => s !== '')
      .reduce<Schema | undefined>((node, key) => node?.[key] as Schema | undefined, document);
  const schema = at(pointer);
  const ref = schema?.['$ref'];
  return typeof ref === 'string' ? at(ref) : schema;
}
