// Enum values in Connect JSON bodies as the spec writes them. Proto3 JSON names an enum value by
// its full proto name (`IDENTITY_MODE_SERIAL`) or number; the spec and the /v1 routes write the
// values as the domain does (`serial`, `active_at_mint`, `first_scan`, `ACTIVE`). Those spellings
// are accepted here too, in any case, by rewriting them to the proto name before protobuf-es reads
// the body; any other string is refused naming the field and listing the values it takes.

import type { DescEnum, DescField, DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';

/**
 * The spec's spelling of each value of an enum (by its full name, `mint.v1.IdentityMode`), as
 * `[spelling, number]` pairs in the order they are listed; an enum absent here is spelt by the
 * proto names of its values without their prefix (`SERIAL`), in any case.
 */
export type EnumSpellings = ReadonlyMap<string, readonly (readonly [spelling: string, number: number])[]>;

/** The outcome of {@link respellEnums}: whether `value` was changed in place, or the refusal. */
export type RespellOutcome = { readonly changed: boolean } | ConnectError;

/**
 * Rewrites, in place, every enum value of `value` (a parsed JSON request of `schema`) that is
 * written in one of its spellings (compared in any case) to its proto name. A string that is
 * neither a proto name nor a spelling is `invalid_argument` naming the field (`layout.paper`,
 * `formats[1]`) and the values it takes; numbers and anything not a string are left to protobuf-es.
 */
export function respellEnums(schema: DescMessage, value: unknown, spellings: EnumSpellings): RespellOutcome {
  const state = { changed: false };
  const problem = walkMessage(schema, value, '', spellings, state);
  return problem ?? state;
}

type State = { changed: boolean };

/**
 * The fields of each message that may hold an enum value, directly or in a message below, by their
 * JSON and proto names; an empty map for a message without any (its value is not walked).
 */
const enumFields = new WeakMap<DescMessage, ReadonlyMap<string, DescField>>();

function enumFieldsOf(schema: DescMessage): ReadonlyMap<string, DescField> {
  let found = enumFields.get(schema);
  if (found === undefined) {
    const fields = new Map<string, DescField>();
    if (!isWellKnown(schema)) {
      for (const field of schema.fields) if (mayHoldEnum(field, new Set([schema]))) fields.set(field.jsonName, field).set(field.name, field);
    }
    enumFields.set(schema, (found = fields));
  }
  return found;
}

/** True when `field` holds an enum value, or a message that may (a message met again on the way is assumed to). */
function mayHoldEnum(field: DescField, seen: Set<DescMessage>): boolean {
  if (field.fieldKind === 'enum' || (field.fieldKind === 'list' && field.listKind === 'enum') || (field.fieldKind === 'map' && field.mapKind === 'enum'))
    return true;
  const below =
    field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message') || (field.fieldKind === 'map' && field.mapKind === 'message')
      ? field.message
      : undefined;
  if (below === undefined || isWellKnown(below)) return false;
  if (seen.has(below)) return true;
  seen.add(below);
  return below.fields.some((f) => mayHoldEnum(f, seen));
}

/** Well-known types have JSON forms of their own (a Timestamp is a string, a Struct any object). */
const isWellKnown = (schema: DescMessage) => schema.typeName.startsWith('google.protobuf.');

function walkMessage(schema: DescMessage, value: unknown, prefix: string, spellings: EnumSpellings, state: State): ConnectError | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fields = enumFieldsOf(schema);
  if (fields.size === 0) return undefined;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const field = fields.get(key);
    if (field === undefined) continue;
    const problem = walkField(field, object, key, `${prefix}${field.name}`, spellings, state);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function walkField(
  field: DescField,
  holder: Record<string, unknown>,
  key: string,
  at: string,
  spellings: EnumSpellings,
  state: State,
): ConnectError | undefined {
  const value = holder[key];
  switch (field.fieldKind) {
    case 'enum':
      return respell(field.enum, holder, key, at, spellings, state);
    case 'message':
      return walkMessage(field.message, value, `${at}.`, spellings, state);
    case 'list': {
      if (!Array.isArray(value)) return undefined;
      for (let i = 0; i < value.length; i++) {
        const problem =
          field.listKind === 'enum'
            ? respell(field.enum, value as unknown as Record<string, unknown>, String(i), `${at}[${i}]`, spellings, state)
            : field.listKind === 'message'
              ? walkMessage(field.message, value[i], `${at}[${i}].`, spellings, state)
              : undefined;
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
      const entries = value as Record<string, unknown>;
      for (const entry of Object.keys(entries)) {
        const where = `${at}[${JSON.stringify(entry)}]`;
        const problem =
          field.mapKind === 'enum'
            ? respell(field.enum, entries, entry, where, spellings, state)
            : field.mapKind === 'message'
              ? walkMessage(field.message, entries[entry], `${where}.`, spellings, state)
              : undefined;
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** An enum's proto names, its spellings (upper-cased) with the proto name each stands for, and the values as a refusal lists them. */
interface EnumTable {
  readonly names: ReadonlySet<string>;
  readonly byUpper: ReadonlyMap<string, string>;
  readonly listed: string;
}

/** The tables built so far, per spellings and enum. */
const tables = new WeakMap<EnumSpellings, WeakMap<DescEnum, EnumTable>>();

function tableOf(schema: DescEnum, spellings: EnumSpellings): EnumTable {
  let built = tables.get(spellings);
  if (built === undefined) tables.set(spellings, (built = new WeakMap()));
  let table = built.get(schema);
  if (table === undefined) {
    const own = spellings.get(schema.typeName) ?? schema.values.filter((v) => v.number !== 0).map((v) => [v.localName.toLowerCase(), v.number] as const);
    const nameOf = new Map(schema.values.map((v) => [v.number, v.name]));
    const byUpper = new Map<string, string>();
    for (const [spelling, number] of own) {
      const name = nameOf.get(number);
      if (name !== undefined) byUpper.set(spelling.toUpperCase(), name);
    }
    const named = own.flatMap(([, number]) => nameOf.get(number) ?? []);
    table = {
      names: new Set(schema.values.map((v) => v.name)),
      byUpper,
      listed: `${own.map(([spelling]) => spelling).join(', ')} (or ${named.join(', ')})`,
    };
    built.set(schema, table);
  }
  return table;
}

function respell(schema: DescEnum, holder: Record<string, unknown>, key: string, at: string, spellings: EnumSpellings, state: State): ConnectError | undefined {
  const value = holder[key];
  if (typeof value !== 'string') return undefined;
  const table = tableOf(schema, spellings);
  if (table.names.has(value)) return undefined;
  const name = table.byUpper.get(value.toUpperCase());
  if (name === undefined) {
    return new ConnectError(`invalid value for field ${at}: ${JSON.stringify(value)} is not one of ${table.listed}`, Code.InvalidArgument);
  }
  holder[key] = name;
  state.changed = true;
  return undefined;
}
