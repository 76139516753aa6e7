// Requests as the use cases' values, read from the message's descriptor, so no handler converts a
// request field by field: the counterpart of `messageOf`, which writes views into messages.

import { isMessage, type DescEnum, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import * as contract from '@mint/contract';
import type { MintRequest } from '@mint/domain';
import type * as enums from './enums.ts';
import { enumMappings, type EnumMapping } from './enums.ts';

/**
 * Enum mappings made outside this package (the API's DocumentFormat), added by declaration merging
 * (`declare module '@mint/wire' { interface DomainEnums { name: typeof mapping } }`) so that
 * {@link ValuesOf} types their fields as it types those of the mappings exported here.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging.
export interface DomainEnums {}

/** Whether X and Y are the same type (an enum is not `number`, though each is assignable to the other). */
type Same<X, Y> = (<G>() => G extends X ? 1 : 2) extends <G>() => G extends Y ? 1 : 2 ? true : false;

/** The mappings exported here and those merged into {@link DomainEnums}. */
type Mappings = typeof enums & DomainEnums;

/** The domain union of wire enum E by its mapping, with null when its UNSPECIFIED means none; never when E has no mapping. */
type DomainOf<E> = {
  [K in keyof Mappings]: Mappings[K] extends EnumMapping<infer W, infer D, infer N>
    ? Same<E, W> extends true
      ? D | (N extends true ? null : never)
      : never
    : never;
}[keyof Mappings];

/** The use cases' value of a field's (or a list item's) wire value T. */
type ValueOf<T> = [T] extends [number]
  ? [DomainOf<T>] extends [never]
    ? T
    : DomainOf<T>
  : T extends Timestamp
    ? Date
    : T extends Message
      ? ValuesOf<T>
      : T extends readonly (infer I)[]
        ? ValueOf<I>[]
        : T extends { case: string; value: infer V }
          ? { case: T['case']; value: ValueOf<V> }
          : T;

/**
 * The use cases' values of request message M (see {@link valuesOf}): the same fields, an unset
 * optional field or message as null, a Timestamp as a Date, a mapped enum as its domain union.
 */
export type ValuesOf<M> = {
  [K in keyof M as K extends '$typeName' | '$unknown' ? never : K]-?: undefined extends M[K] ? ValueOf<Exclude<M[K], undefined>> | null : ValueOf<M[K]>;
};

/** The contract's messages by full name. */
const contractMessages = new Map(
  (Object.values(contract) as unknown[])
    .filter((value): value is DescMessage => typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'message')
    .map((desc) => [desc.typeName, desc]),
);

/**
 * The values of a request `message` of the contract, read from its descriptor, as the use cases
 * take them: an unset optional field or message is null; a Timestamp is a Date; an enum with a
 * mapping (see `enumMapping`) is its domain value, UNSPECIFIED null where the mapping says it means
 * none, and else (like an unknown number) an InvalidInputError naming the field by its path
 * (`layout.paper`; a list's items by the list's name); nested and repeated messages the same way,
 * a oneof's chosen value too. A Struct, a map, bytes and 64-bit integers are kept as they are.
 */
export function valuesOf<M extends Message>(message: M): ValuesOf<M> {
  const schema = contractMessages.get(message.$typeName);
  if (schema === undefined) throw new Error(`${message.$typeName} is not a message of the contract`);
  return read(schema, message, '') as ValuesOf<M>;
}

/** A mint request of SubmitMintRequest (and of the /v1 routes that submit one) as the use cases take it. */
export function mintRequestOf(req: contract.SubmitMintRequestRequest): MintRequest {
  return valuesOf(req);
}

/** The values of `message` of `schema`, its fields' paths under `prefix`. */
function read(schema: DescMessage, message: object, prefix: string): Record<string, unknown> {
  const from = message as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  for (const field of schema.fields) {
    if (field.oneof !== undefined) continue;
    const value = from[field.localName];
    const path = prefix + field.name;
    if (value === undefined) values[field.localName] = null;
    else if (field.fieldKind === 'list') values[field.localName] = (value as unknown[]).map((item) => fieldValueOf(field, item, path));
    else values[field.localName] = fieldValueOf(field, value, path);
  }
  for (const oneof of schema.oneofs) {
    const chosen = from[oneof.localName] as { case: string | undefined; value?: unknown };
    const field = oneof.fields.find((f) => f.localName === chosen.case);
    values[oneof.localName] = field === undefined ? { case: undefined } : { case: chosen.case, value: fieldValueOf(field, chosen.value, prefix + field.name) };
  }
  return values;
}

/** One value (an item, for a list) of `field` at `path`. */
function fieldValueOf(field: DescField, value: unknown, path: string): unknown {
  if (field.fieldKind === 'map') return value;
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind;
  if (kind === 'enum') return domainOf(field.enum!, value as number, path);
  if (kind !== 'message' || !isMessage(value)) return value;
  return value.$typeName === 'google.protobuf.Timestamp' ? timestampDate(value as Timestamp) : read(field.message!, value, `${path}.`);
}

/** The domain value of enum value `wire` at `path`, or the number itself when the enum has no mapping. */
function domainOf(schema: DescEnum, wire: number, path: string): unknown {
  const mapping = enumMappings.get(schema.typeName);
  if (mapping === undefined) return wire;
  return wire === 0 && mapping.unspecifiedIsNone ? null : mapping.toDomain(wire, path);
}
