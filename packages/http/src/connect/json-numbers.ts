// Numbers given as JSON strings in Connect JSON bodies. Proto3 JSON lets a number field carry a
// string, and protobuf-es converts it with `Number()` (`int32FromJson`, and `Number`/`BigInt` for
// floats and 64-bit integers in `from-json.js`), which also reads hexadecimal, octal and binary
// literals: `"requested_quantity": "0x10"` would be 16. Only decimal notation is a number here.

import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';

/** A decimal number as proto3 JSON writes one in a string: digits, an optional fraction and exponent. */
const decimal = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** The special values of float and double fields. */
const floatWords = new Set(['NaN', 'Infinity', '-Infinity']);

const integerTypes = new Set<ScalarType>([
  ScalarType.INT32,
  ScalarType.SINT32,
  ScalarType.SFIXED32,
  ScalarType.UINT32,
  ScalarType.FIXED32,
  ScalarType.INT64,
  ScalarType.SINT64,
  ScalarType.SFIXED64,
  ScalarType.UINT64,
  ScalarType.FIXED64,
]);
const floatTypes = new Set<ScalarType>([ScalarType.FLOAT, ScalarType.DOUBLE]);

/** The wrapper types whose JSON is their number itself. */
const numberWrappers = new Map<string, ScalarType>([
  ['google.protobuf.Int32Value', ScalarType.INT32],
  ['google.protobuf.UInt32Value', ScalarType.UINT32],
  ['google.protobuf.Int64Value', ScalarType.INT64],
  ['google.protobuf.UInt64Value', ScalarType.UINT64],
  ['google.protobuf.FloatValue', ScalarType.FLOAT],
  ['google.protobuf.DoubleValue', ScalarType.DOUBLE],
]);

/**
 * `invalid_argument` naming the first number field of `value` (a parsed JSON request of `schema`)
 * whose string value is not decimal (`lots[0].qty`); undefined when there is none.
 */
export function nonDecimalNumber(schema: DescMessage, value: unknown): ConnectError | undefined {
  const path = checkMessage(schema, value, '');
  return path === undefined
    ? undefined
    : new ConnectError(`invalid value for field ${path}: a number in a JSON string must be written in decimal`, Code.InvalidArgument);
}

/** The path of the first offending field of `value` as a `schema` message, or undefined. */
function checkMessage(schema: DescMessage, value: unknown, prefix: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const wrapped = numberWrappers.get(schema.typeName);
  if (wrapped !== undefined) return undefined; // Reached only through a field, which checks it.
  for (const field of schema.fields) {
    const own = Object.hasOwn(value, field.jsonName) ? field.jsonName : Object.hasOwn(value, field.name) ? field.name : undefined;
    if (own === undefined) continue;
    const at = `${prefix}${field.name}`;
    const problem = checkField(field, (value as Record<string, unknown>)[own], at);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function checkField(field: DescField, value: unknown, at: string): string | undefined {
  switch (field.fieldKind) {
    case 'scalar':
      return badScalar(field.scalar, value) ? at : undefined;
    case 'message':
      return checkSingular(field.message, value, at);
    case 'list': {
      if (!Array.isArray(value)) return undefined;
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        const problem =
          field.listKind === 'scalar'
            ? badScalar(field.scalar, item)
              ? `${at}[${i}]`
              : undefined
            : field.listKind === 'message'
              ? checkSingular(field.message, item, `${at}[${i}]`)
              : undefined;
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
      for (const [key, item] of Object.entries(value)) {
        if (badScalar(field.mapKey, key)) return `${at}[${JSON.stringify(key)}]`;
        const problem =
          field.mapKind === 'scalar'
            ? badScalar(field.scalar, item)
              ? `${at}[${JSON.stringify(key)}]`
              : undefined
            : field.mapKind === 'message'
              ? checkSingular(field.message, item, `${at}[${JSON.stringify(key)}]`)
              : undefined;
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function checkSingular(schema: DescMessage, value: unknown, at: string): string | undefined {
  const wrapped = numberWrappers.get(schema.typeName);
  if (wrapped !== undefined) return badScalar(wrapped, value) ? at : undefined;
  return checkMessage(schema, value, `${at}.`);
}

/** True when `value` is a string a number field would read as something other than a decimal number. */
function badScalar(type: ScalarType, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (integerTypes.has(type)) return !decimal.test(value);
  if (floatTypes.has(type)) return !decimal.test(value) && !floatWords.has(value);
  return false;
}
