// Use-case views as messages, read from the message's descriptor, so no handler spells a message
// out field by field: every field takes the view's value of its (camelCase) name.

import { ScalarType, type DescField, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { specSpellings } from './enums.ts';

/**
 * The message `schema` of a use-case view: each field takes the view's property of the field's
 * local name (properties the message lacks are ignored). Null and undefined leave a field unset;
 * a Date becomes a Timestamp, a domain enum value (`QUEUED`, `active_at_mint`) the number of the
 * enum's value of that name, a number of a 64-bit field a bigint, an object a nested message (the
 * same way) and an array a repeated field; a Struct, a oneof and a map take the value as it is.
 * An enum value with no wire value is a contract mismatch and throws.
 */
export function messageOf<Desc extends DescMessage>(schema: Desc, view: object): MessageInitShape<Desc> {
  const from = view as Record<string, unknown>;
  const init: Record<string, unknown> = {};
  for (const field of schema.fields) {
    if (field.oneof !== undefined) continue;
    const value = from[field.localName];
    if (value === null || value === undefined) continue;
    init[field.localName] = field.fieldKind === 'list' ? (value as unknown[]).map((item) => fieldValueOf(field, item)) : fieldValueOf(field, value);
  }
  for (const oneof of schema.oneofs) if (from[oneof.localName] !== undefined) init[oneof.localName] = from[oneof.localName];
  return init as MessageInitShape<Desc>;
}

/** 64-bit integer kinds: a view's number becomes a bigint. */
const wide: ReadonlySet<ScalarType> = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

/** One value (an item, for a list) of `field`. */
function fieldValueOf(field: DescField, value: unknown): unknown {
  if (field.fieldKind === 'map') return value;
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind;
  if (kind === 'enum') {
    if (typeof value === 'number') return value;
    const wire = specSpellings.get(field.enum!.typeName)?.find(([spelt]) => spelt === value)?.[1];
    if (wire === undefined) throw new Error(`${field.enum!.typeName} has no value for ${JSON.stringify(value)}`);
    return wire;
  }
  if (kind === 'message') {
    const m = field.message!;
    if (m.typeName === 'google.protobuf.Timestamp' && value instanceof Date) return timestampFromDate(value);
    if (m.typeName === 'google.protobuf.Struct' || m.typeName === 'google.protobuf.Timestamp') return value;
    return messageOf(m, value as object);
  }
  return wide.has(field.scalar!) && (typeof value === 'number' || typeof value === 'string') ? BigInt(value) : value;
}
