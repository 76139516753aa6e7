// The /v1 side of an RPC, derived from its descriptors: the JSON Schema of a request and of a
// response (for /v1/openapi.json and the body check), a JSON body read into the request message,
// and a response message written as the spec's JSON. Field names are the proto names (snake_case),
// enum values the domain's spellings (`serial`, `QUEUED`: the mapping of ./enums.ts),
// times ISO 8601 text, 64-bit integers numbers, unset optional fields null.

import {
  create,
  fromJson,
  toJson,
  getOption,
  hasOption,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
} from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate, ValueSchema, type Timestamp, type Value } from '@bufbuild/protobuf/wkt';
import { field as fieldRulesOption, type FieldRules } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';
import { specSpellings } from './enums.ts';
import { arrayOf, boolean, integer, nullable, obj, oneOfEnum, string, text, time, uuid, type Schema } from './json-schema.ts';

/**
 * Where a field sits: the request's own fields and the messages below them are described with the
 * proto's limits; the rows of a repeated message field are checked for their types only, so the
 * use case refuses a bad row alone (a row's enum or time that is not one arrives as an out-of-range
 * value). The schemas check the shape (types, required and unknown fields, enums, uuids); the
 * limits are named in the descriptions and checked by the use cases, which hold the same limits as
 * the proto's rules (a test compares them).
 */
type Place = 'message' | 'row';

const number: Schema = { type: 'number' };
const any: Schema = {};
const object: Schema = { type: 'object' };

/** The field's protovalidate rules, undefined when it has none. */
function rulesOf(field: DescField): FieldRules | undefined {
  return hasOption(field, fieldRulesOption) ? getOption(field, fieldRulesOption) : undefined;
}

/** The values of an enum as the spec writes them (`serial`, `QUEUED`), with the number each stands for. */
function spellingsOf(schema: DescEnum): readonly (readonly [string, number])[] {
  return specSpellings.get(schema.typeName) ?? schema.values.filter((v) => v.number !== 0).map((v) => [v.localName.toLowerCase(), v.number] as const);
}

/**
 * True when the request must carry the field: its protovalidate rules refuse its zero value
 * (`required`, a string's `min_len`, a list's `min_items`, a number that must be positive). An
 * explicitly optional field or a oneof member never is.
 */
function isRequired(field: DescField): boolean {
  if (field.proto.proto3Optional || field.oneof !== undefined) return false;
  const rules = rulesOf(field);
  if (rules === undefined) return false;
  if (rules.required) return true;
  const type = rules.type;
  switch (type.case) {
    case 'string':
      return type.value.minLen > 0n;
    case 'repeated':
      return type.value.minItems > 0n;
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'uint64': {
      const above = type.value.greaterThan;
      return (above.case === 'gt' && Number(above.value) >= 0) || (above.case === 'gte' && Number(above.value) > 0);
    }
    default:
      return false;
  }
}

/** `1 to 100`, `at least 1`, `at most 6` of a range; undefined when the range has no bound. */
function rangeText(min: bigint | undefined, max: bigint | undefined, unit = ''): string | undefined {
  const n = (v: bigint) => v.toLocaleString('en-US');
  const text =
    min !== undefined && max !== undefined
      ? `${n(min)} to ${n(max)}`
      : min !== undefined
        ? `at least ${n(min)}`
        : max !== undefined
          ? `at most ${n(max)}`
          : undefined;
  return text === undefined ? undefined : `${text.charAt(0).toUpperCase()}${text.slice(1)}${unit}.`;
}

/** The limits the field's protovalidate rules set, in words (`1 to 1,000,000.`), for the schema's description. */
function rulesText(rules: FieldRules | undefined): string | undefined {
  const type = rules?.type;
  switch (type?.case) {
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'uint64': {
      const { greaterThan: above, lessThan: below } = type.value;
      const min = above.case === 'gt' ? BigInt(above.value) + 1n : above.case === 'gte' ? BigInt(above.value) : undefined;
      const max = below.case === 'lt' ? BigInt(below.value) - 1n : below.case === 'lte' ? BigInt(below.value) : undefined;
      return rangeText(min, max);
    }
    case 'string':
      return rangeText(type.value.minLen > 0n ? type.value.minLen : undefined, type.value.maxLen > 0n ? type.value.maxLen : undefined, ' characters');
    case 'repeated':
      return rangeText(type.value.minItems > 0n ? type.value.minItems : undefined, type.value.maxItems > 0n ? type.value.maxItems : undefined, ' entries');
    default:
      return undefined;
  }
}

/** The JSON Schema of one value of `field` (an item, for a list). */
function valueSchema(field: DescField, place: Place, rules: FieldRules | undefined): Schema {
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind === 'map' ? field.mapKind : field.fieldKind;
  if (kind === 'enum') return place === 'row' ? string : oneOfEnum(spellingsOf(field.enum!).map(([s]) => s));
  if (kind === 'message') return messageValueSchema(field.message!, field.fieldKind === 'list' ? 'row' : place);
  const scalar = field.scalar!;
  if (scalar === ScalarType.BOOL) return boolean;
  if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) return number;
  if (scalar !== ScalarType.STRING && scalar !== ScalarType.BYTES) return integer;
  const stringRules = field.fieldKind === 'list' && rules?.type.case === 'repeated' ? rules.type.value.items?.type : rules?.type;
  return stringRules?.case === 'string' && stringRules.value.wellKnown.case === 'uuid' ? uuid : text;
}

/** The JSON Schema of a message value: a time, any JSON for Value and Struct, else an object of its fields. */
function messageValueSchema(message: DescMessage, place: Place): Schema {
  if (message.typeName === 'google.protobuf.Timestamp') return place === 'row' ? string : time;
  if (message.typeName === 'google.protobuf.Value') return any;
  if (message.typeName === 'google.protobuf.Struct') return object;
  return requestSchema(message, '', place);
}

/**
 * The JSON Schema of a request of `message`: its fields named `prefix` + proto name, unknown ones
 * refused; required when {@link isRequired}, any other may be null (unset).
 */
export function requestSchema(message: DescMessage, prefix = '', place: Place = 'message'): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const field of message.fields) {
    const rules = rulesOf(field);
    let schema = valueSchema(field, place, rules);
    if (field.fieldKind === 'list') {
      schema = arrayOf(schema);
    } else if (field.fieldKind === 'map') {
      schema = { type: 'object', additionalProperties: schema };
    }
    const name = prefix + field.name;
    if (isRequired(field)) required.push(name);
    else schema = schema === any ? any : nullable(schema);
    const description = place === 'message' ? rulesText(rules) : undefined;
    properties[name] = description === undefined ? schema : { ...schema, description };
  }
  return obj(properties, required);
}

/** How the spec shapes a response: fields left out (dotted paths), one message field lifted to the top, the fields of a refusal (ok=false). */
export interface ResponseShape {
  readonly omit: readonly string[];
  readonly flatten: string;
  readonly refusal: readonly string[];
}

/** The shape of a message written whole. */
export const wholeMessage: ResponseShape = { omit: [], flatten: '', refusal: [] };

/** The JSON Schema of a response value of `field` as {@link toSpecJson} writes it. */
function responseFieldSchema(field: DescField, omit: readonly string[], path: string): Schema {
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind === 'map' ? field.mapKind : field.fieldKind;
  let schema: Schema;
  if (kind === 'enum') schema = oneOfEnum(spellingsOf(field.enum!).map(([s]) => s));
  else if (kind === 'message') {
    const m = field.message!;
    schema =
      m.typeName === 'google.protobuf.Timestamp'
        ? time
        : m.typeName === 'google.protobuf.Value'
          ? any
          : m.typeName === 'google.protobuf.Struct'
            ? object
            : responseSchema(m, { omit, flatten: '', refusal: [] }, `${path}.`);
  } else {
    const scalar = field.scalar!;
    schema =
      scalar === ScalarType.BOOL
        ? boolean
        : scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT
          ? number
          : scalar === ScalarType.STRING || scalar === ScalarType.BYTES
            ? string
            : integer;
  }
  if (field.fieldKind === 'list') return arrayOf(schema);
  if (field.fieldKind === 'map') return { type: 'object', additionalProperties: schema };
  const mayBeUnset = kind === 'message' || kind === 'enum' || field.proto.proto3Optional || field.oneof !== undefined;
  return mayBeUnset && schema !== any ? nullable(schema) : schema;
}

/** The object schema of the fields of `message` kept at `prefix` (a dotted path ending in `.`, or ''). */
function fieldsSchema(message: DescMessage, omit: readonly string[], prefix: string): Record<string, Schema> {
  const properties: Record<string, Schema> = {};
  for (const field of message.fields) {
    const path = prefix + field.name;
    if (omit.includes(path)) continue;
    properties[field.name] = responseFieldSchema(field, omit, path);
  }
  return properties;
}

/** The JSON Schema of a response of `message` in the spec's shape (see {@link ResponseShape}). */
export function responseSchema(message: DescMessage, shape: ResponseShape, prefix = ''): Schema {
  let properties = fieldsSchema(message, shape.omit, prefix);
  const lifted = shape.flatten === '' ? undefined : message.fields.find((f) => f.name === shape.flatten);
  if (lifted?.message !== undefined) {
    const { [shape.flatten]: _lifted, ...rest } = properties;
    properties = { ...rest, ...fieldsSchema(lifted.message, shape.omit, `${shape.flatten}.`) };
  }
  if (prefix !== '' || properties['ok'] === undefined) return obj(properties);
  if (shape.refusal.length === 0) return obj({ ...properties, ok: { const: true } });
  const pick = (keep: (name: string) => boolean) => Object.fromEntries(Object.entries(properties).filter(([name]) => name !== 'ok' && keep(name)));
  return {
    oneOf: [
      obj({ ok: { const: true }, ...pick((name) => !shape.refusal.includes(name)) }),
      obj({ ok: { const: false }, ...pick((name) => shape.refusal.includes(name)) }),
    ],
  };
}

/**
 * The request message of `message` from a JSON body that passed {@link requestSchema} (fields
 * named `prefix` + proto name; null is unset). A row's enum spelling that is no value becomes an
 * out-of-range number, a row's time that is none an unreadable time, so the use case names them.
 */
export function fromSpecJson<T extends Message>(message: DescMessage, json: Readonly<Record<string, unknown>>, prefix = ''): T {
  const init: Record<string, unknown> = {};
  for (const field of message.fields) {
    const value = json[prefix + field.name];
    if (value === undefined || value === null) continue;
    const converted =
      field.fieldKind === 'list'
        ? (value as unknown[]).map((item) => fieldValue(field, item))
        : field.fieldKind === 'map'
          ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, fieldValue(field, v)]))
          : fieldValue(field, value);
    if (field.oneof !== undefined) init[field.oneof.localName] = { case: field.localName, value: converted };
    else init[field.localName] = converted;
  }
  return create(message, init) as T;
}

/** One value (an item, for a list) of `field` from its JSON. */
function fieldValue(field: DescField, value: unknown): unknown {
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind === 'map' ? field.mapKind : field.fieldKind;
  if (kind === 'enum') {
    const text = String(value);
    const spelt = spellingsOf(field.enum!).find(([s]) => s === text) ?? spellingsOf(field.enum!).find(([s]) => s.toUpperCase() === text.toUpperCase());
    return spelt?.[1] ?? field.enum!.values.find((v) => v.name === text)?.number ?? 0x7fffffff;
  }
  if (kind === 'message') {
    const m = field.message!;
    if (m.typeName === 'google.protobuf.Timestamp') {
      const date = new Date(String(value));
      return Number.isNaN(date.getTime()) ? { seconds: 10n ** 13n, nanos: 0 } : timestampFromDate(date);
    }
    if (m.typeName === 'google.protobuf.Value') return fromJson(ValueSchema, value as JsonValue);
    if (m.typeName === 'google.protobuf.Struct') return value as JsonObject;
    return fromSpecJson(m, value as Record<string, unknown>);
  }
  const scalar = field.scalar!;
  const wide =
    scalar === ScalarType.INT64 ||
    scalar === ScalarType.UINT64 ||
    scalar === ScalarType.SINT64 ||
    scalar === ScalarType.FIXED64 ||
    scalar === ScalarType.SFIXED64;
  return wide ? BigInt(value as number) : value;
}

/** The spec's JSON of a response message (see {@link ResponseShape}); `ok` decides between a success and a refusal. */
export function toSpecJson(message: DescMessage, value: Message, shape: ResponseShape): Record<string, unknown> {
  let json = fieldsJson(message, value, shape.omit, '');
  const lifted = shape.flatten === '' ? undefined : message.fields.find((f) => f.name === shape.flatten);
  if (lifted?.message !== undefined) {
    const { [shape.flatten]: _lifted, ...rest } = json;
    const inner = (value as unknown as Record<string, Message | undefined>)[lifted.localName];
    json = { ...rest, ...(inner === undefined ? {} : fieldsJson(lifted.message, inner, shape.omit, `${shape.flatten}.`)) };
  }
  if (shape.refusal.length === 0 || !('ok' in json)) return json;
  const refused = json['ok'] === false;
  return Object.fromEntries(Object.entries(json).filter(([name]) => name === 'ok' || shape.refusal.includes(name) === refused));
}

function fieldsJson(message: DescMessage, value: Message, omit: readonly string[], prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const holder = value as unknown as Record<string, unknown>;
  for (const field of message.fields) {
    const path = prefix + field.name;
    if (omit.includes(path)) continue;
    let raw: unknown;
    if (field.oneof === undefined) raw = holder[field.localName];
    else {
      const chosen = holder[field.oneof.localName] as { case?: string; value?: unknown };
      raw = chosen.case === field.localName ? chosen.value : undefined;
    }
    const one = (item: unknown) => valueJson(field, item, omit, `${path}.`);
    out[field.name] =
      raw === undefined
        ? null
        : field.fieldKind === 'list'
          ? (raw as unknown[]).map(one)
          : field.fieldKind === 'map'
            ? Object.fromEntries(Object.entries(raw as object).map(([k, v]) => [k, one(v)]))
            : one(raw);
  }
  return out;
}

/** One value (an item, for a list) of `field` as the spec's JSON. */
function valueJson(field: DescField, value: unknown, omit: readonly string[], prefix: string): unknown {
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind === 'map' ? field.mapKind : field.fieldKind;
  if (kind === 'enum') return value === 0 ? null : (spellingsOf(field.enum!).find(([, n]) => n === value)?.[0] ?? null);
  if (kind === 'message') {
    const m = field.message!;
    if (m.typeName === 'google.protobuf.Timestamp') return timestampDate(value as Timestamp).toISOString();
    if (m.typeName === 'google.protobuf.Struct') return value;
    if (m.typeName === 'google.protobuf.Value') return toJson(ValueSchema, value as Value);
    return fieldsJson(m, value as Message, omit, prefix);
  }
  return typeof value === 'bigint' ? Number(value) : value;
}
