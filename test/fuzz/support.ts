// Shared pieces of the fuzz suite: trial counts, random field values, arbitraries built from the
// contract's message descriptors, and the database invariants every run must leave intact.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { createLogger } from '@mint/runtime';
import { createFsPackStore, type PackStore } from '@mint/store';
import type { UseCaseContext } from '@mint/usecases';
import fc from 'fast-check';
import pg from 'pg';
import { startApi } from '../../services/api/src/start.ts';

/**
 * Trials per property: FUZZ_RUNS (default 25) times the property's weight, at least 1. CI sets a
 * small FUZZ_RUNS; a soak run a large one. FUZZ_SEED replays a failing run (fast-check prints it).
 */
export function runs(weight = 1): number {
  const base = Number(process.env['FUZZ_RUNS'] ?? 25);
  if (!Number.isFinite(base) || base <= 0) throw new Error(`FUZZ_RUNS must be a positive number, got ${process.env['FUZZ_RUNS']}`);
  return Math.max(1, Math.round(base * weight));
}

/** fast-check parameters of every property: the trial count, and FUZZ_SEED when set. */
export function fuzzParameters(weight = 1): fc.Parameters<unknown> {
  const seed = process.env['FUZZ_SEED'];
  return { numRuns: runs(weight), ...(seed === undefined ? {} : { seed: Number(seed) }), endOnFailure: true };
}

/** Texts that break naive parsers: control characters, lone surrogates, SQL, paths, numbers as text. */
const nastyTexts = [
  ' ',
  '\u0000',
  '\t\n',
  'null',
  'undefined',
  '-1',
  '1e309',
  'NaN',
  '../../etc/passwd',
  "'; drop table mint_units; --",
  '%00%ff',
  '\uD800',
  '\uDFFF',
  'Ω≈ç√∫',
  '\u202Eevil',
  '🙂🙂🙂',
  'ﷺ',
  '<script>alert(1)</script>',
  '{"a":1}',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '00000000-0000-0000-0000-00000000000g',
  ' 3fa85f64-5717-4562-b3fc-2c963f66afa6',
];

/** Any text: empty, short unicode (graphemes, raw code points), nasty constants, or huge (up to 300k characters). */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant(''), weight: 2 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.constantFrom(...nastyTexts), weight: 3 },
  { arbitrary: fc.uuid(), weight: 2 },
  { arbitrary: fc.tuple(fc.integer({ min: 256, max: 300_000 }), fc.constantFrom('x', 'é', '🙂', '0')).map(([n, c]) => c.repeat(n)), weight: 1 },
);

/** 32-bit integers around every interesting bound (0, ±1, limits of the contract, int32 extremes) and anywhere. */
export const anyInt32: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 1, -1, 2, 100, 101, 1000, 20_000, 20_001, 1_000_000, 1_000_001, 2_147_483_647, -2_147_483_648),
  fc.integer({ min: 1, max: 50 }),
  fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }),
);

/** 64-bit integers, extremes included. */
export const anyInt64: fc.Arbitrary<bigint> = fc.oneof(
  fc.constantFrom(0n, 1n, -1n, 2n ** 31n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);

/** Ids the fuzzer draws from: real rows of the seeded brand (grown as calls create rows), plus any text. */
export interface IdPool {
  /** The brand whose token authorizes the calls. */
  readonly brandId: string;
  /** Another brand's id (calls on it must be denied). */
  readonly otherBrandId: string;
  /** Real ids by the field names that carry them (`product_id`, `mint_job_id`, ...). */
  readonly byField: Map<string, string[]>;
}

/** Records a real id under `field` (a newly created job or batch becomes a target for later calls). */
export function remember(pool: IdPool, field: string, id: string | undefined | null): void {
  if (id === undefined || id === null || id === '') return;
  const list = pool.byField.get(field) ?? [];
  if (!list.includes(id)) list.push(id);
  pool.byField.set(field, list);
}

/** Aliases: request fields that name the same kind of row under another name. */
const idAliases: Readonly<Record<string, readonly string[]>> = {
  job_id: ['mint_job_id'],
  mint_job_id: ['job_id'],
  batch_id: ['product_batch_id', 'production_batch_id'],
  product_batch_id: ['production_batch_id', 'batch_id'],
  production_batch_id: ['product_batch_id', 'batch_id'],
  entity_id: ['mint_batch_id', 'mint_job_id'],
  id: ['product_id', 'import_id'],
  ids: ['unit_id'],
};

/** One pick from the pool's current ids for `field`, or undefined when it has none (read at generation time). */
function poolPick(pool: IdPool, field: string): fc.Arbitrary<string> {
  return fc.nat().map((n) => {
    const names = [field, ...(idAliases[field] ?? [])];
    const ids = names.flatMap((name) => pool.byField.get(name) ?? []);
    return ids.length === 0 ? pool.brandId : ids[n % ids.length]!;
  });
}

/** A value for an id field: mostly a real id, else a random uuid, another brand's id or any text. */
function idValue(pool: IdPool, field: DescField): fc.Arbitrary<string> {
  if (field.name === 'brand_id') {
    return fc.oneof(
      { arbitrary: fc.constant(pool.brandId), weight: 12 },
      { arbitrary: fc.constant(pool.otherBrandId), weight: 1 },
      { arbitrary: fc.uuid(), weight: 1 },
      { arbitrary: anyText, weight: 1 },
    );
  }
  return fc.oneof({ arbitrary: poolPick(pool, field.name), weight: 6 }, { arbitrary: fc.uuid(), weight: 2 }, { arbitrary: anyText, weight: 1 });
}

const isIdField = (field: DescField) => field.name === 'id' || field.name === 'ids' || field.name.endsWith('_id');

const shortText = fc.oneof(
  anyText.filter((t) => t.length < 100),
  fc.constantFrom('ACTIVE', 'READY', 'DRAFT', '09506000134352', '"quoted, cell"', '"'),
);
const importHeader = 'sku,name,gtin,commercial_status,mint_readiness_status,passport_url';

/** A CSV body: the import columns with random cells, random text, or random bytes. */
const anyBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc
    .array(fc.array(shortText, { minLength: 6, maxLength: 6 }), { maxLength: 5 })
    .map((rows) => new TextEncoder().encode([importHeader, ...rows.map((cells) => cells.join(','))].join('\n'))),
  fc.constant(new Uint8Array()),
);

/** An arbitrary for one value of a scalar or enum field (not repeated). */
function singleValue(pool: IdPool, field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind;
  if (kind === 'enum') {
    const e = field.fieldKind === 'list' || field.fieldKind === 'enum' ? field.enum : undefined;
    const numbers = e === undefined ? [0] : e.values.map((v) => v.number);
    return fc.oneof({ arbitrary: fc.constantFrom(...numbers), weight: 4 }, { arbitrary: fc.integer({ min: -3, max: 1000 }), weight: 1 });
  }
  if (kind === 'message') {
    const desc = field.fieldKind === 'list' || field.fieldKind === 'message' ? field.message : undefined;
    if (desc === undefined) return undefined;
    if (desc.typeName === 'google.protobuf.Timestamp') {
      return fc.record({
        seconds: fc.oneof(fc.bigInt({ min: 0n, max: 4_102_444_800n }), fc.constantFrom(-62_135_596_801n, 253_402_300_800n, 2n ** 62n, -(2n ** 62n))),
        nanos: fc.oneof(fc.integer({ min: 0, max: 999_999_999 }), fc.constantFrom(-1, 1_000_000_000, 2_147_483_647)),
      });
    }
    if (depth >= 3 || desc.typeName.startsWith('google.protobuf.')) return undefined;
    return messageInit(desc, pool, depth + 1);
  }
  const scalar = field.fieldKind === 'list' || field.fieldKind === 'scalar' ? field.scalar : undefined;
  switch (scalar) {
    case ScalarType.STRING:
      return isIdField(field) ? idValue(pool, field) : anyText;
    case ScalarType.BYTES:
      return anyBytes;
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return anyInt64;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.nat({ max: 4_294_967_295 });
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.double();
    default:
      return anyInt32;
  }
}

/** An arbitrary for a field's value: a list (mostly short, sometimes past a 100-item limit) or a single value. */
function fieldValue(pool: IdPool, field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
  const single = singleValue(pool, field, depth);
  if (single === undefined || field.fieldKind === 'map') return undefined;
  if (field.fieldKind !== 'list') return single;
  return fc.oneof({ arbitrary: fc.array(single, { maxLength: 4 }), weight: 8 }, { arbitrary: fc.array(single, { minLength: 99, maxLength: 120 }), weight: 1 });
}

/**
 * An init object for `create(desc, init)` with every field drawn at random: present or absent,
 * one member of each oneof (or none), and any value of the field's type, including out-of-range
 * numbers, unknown enum numbers, unicode and huge texts, random uuids and real ids of `pool`.
 */
export function messageInit(desc: DescMessage, pool: IdPool, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of desc.fields) {
    if (field.oneof !== undefined) continue;
    const value = fieldValue(pool, field, depth);
    if (value !== undefined) entries[field.localName] = fc.option(value, { nil: undefined, freq: 4 });
  }
  for (const oneof of desc.oneofs) {
    const members = oneof.fields.flatMap((field) => {
      const value = fieldValue(pool, field, depth);
      return value === undefined ? [] : [value.map((v) => ({ case: field.localName, value: v }))];
    });
    if (members.length > 0) entries[oneof.localName] = fc.option(fc.oneof(...members), { nil: undefined, freq: 4 });
  }
  return fc.record(entries).map((init) => Object.fromEntries(Object.entries(init).filter(([, v]) => v !== undefined)));
}

/** A valid-looking value of a field, or undefined to leave it unset (optional fields mostly are). */
function plausibleValue(pool: IdPool, field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
  if (field.fieldKind === 'map') return undefined;
  if (field.fieldKind === 'list') {
    if (field.listKind === 'message' && depth < 3) return fc.array(plausibleInit(field.message, pool, depth + 1), { maxLength: 2 });
    if (field.listKind === 'scalar' && field.scalar === ScalarType.STRING)
      return fc.array(isIdField(field) ? poolPick(pool, field.name) : fc.constant('X'), { minLength: 1, maxLength: 3 });
    return undefined;
  }
  const optional = field.proto.proto3Optional === true;
  if (field.fieldKind === 'message') {
    if (field.message.typeName.startsWith('google.protobuf.') || depth >= 3) return undefined;
    return plausibleInit(field.message, pool, depth + 1);
  }
  if (field.fieldKind === 'enum') {
    const defined = field.enum.values.filter((v) => v.number !== 0).map((v) => v.number);
    return defined.length === 0 ? undefined : fc.constantFrom(...defined);
  }
  if (optional && !isIdField(field)) return undefined;
  switch (field.scalar) {
    case ScalarType.STRING:
      if (field.name === 'brand_id') return fc.constant(pool.brandId);
      if (field.name.startsWith('cursor')) return undefined;
      if (isIdField(field)) return poolPick(pool, field.name);
      if (field.name.includes('url')) return fc.constant('https://example.com/p');
      if (field.name === 'gtin') return undefined;
      return fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(...'ABCDEFGH0123-'.split('')) });
    case ScalarType.BYTES:
      return fc.nat({ max: 9999 }).map((n) => new TextEncoder().encode(`${importHeader}\nFZ-${n},Fuzz ${n},,ACTIVE,READY,\n`));
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt({ min: 1n, max: 5n });
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.double({ min: 0, max: 5, noNaN: true });
    default:
      return fc.integer({ min: 1, max: 5 });
  }
}

/** An init object that is valid or close to it: real ids, defined enums, small numbers, the first fillable member of each oneof. */
function plausibleInit(desc: DescMessage, pool: IdPool, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of desc.fields) {
    if (field.oneof !== undefined) continue;
    const value = plausibleValue(pool, field, depth);
    if (value !== undefined) entries[field.localName] = value;
  }
  for (const oneof of desc.oneofs) {
    const members = oneof.fields.flatMap((field) => {
      const value = plausibleValue(pool, field, depth);
      return value === undefined ? [] : [value.map((v) => ({ case: field.localName, value: v }))];
    });
    if (members.length > 0) entries[oneof.localName] = fc.oneof(...members);
  }
  return fc.record(entries);
}

/**
 * An init object for `create(desc, init)` that reaches past validation: a plausible request
 * (see above) with up to two fields replaced by random values of {@link messageInit}, or a
 * fully random one (a quarter of the time).
 */
export function requestInit(desc: DescMessage, pool: IdPool): fc.Arbitrary<Record<string, unknown>> {
  const keys = [...desc.fields.filter((f) => f.oneof === undefined).map((f) => f.localName), ...desc.oneofs.map((o) => o.localName)];
  const mutated = fc
    .tuple(plausibleInit(desc, pool), messageInit(desc, pool), fc.subarray(keys, { maxLength: Math.min(2, keys.length) }))
    .map(([base, random, replace]) => {
      const out: Record<string, unknown> = { ...base };
      for (const key of replace) {
        if (key in random) out[key] = random[key];
        else delete out[key];
      }
      return out;
    });
  return fc.oneof({ arbitrary: mutated, weight: 3 }, { arbitrary: messageInit(desc, pool), weight: 1 });
}

/** Random JSON text of any shape: values, deep nesting (up to 20,000 levels), huge strings. */
export const anyJsonText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 20_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`), weight: 1 },
  { arbitrary: fc.integer({ min: 100_000, max: 2_000_000 }).map((n) => JSON.stringify('x'.repeat(n))), weight: 1 },
);

/**
 * A JSON object shaped like a request of `fieldNames`: known names with values of any JSON type
 * (wrong types, numbers as strings, huge numbers, nulls), sometimes unknown names or a
 * differently cased name.
 */
export function jsonObjectFor(
  fieldNames: readonly string[],
  validish: Readonly<Record<string, fc.Arbitrary<unknown>>> = {},
): fc.Arbitrary<Record<string, unknown>> {
  const wrong: fc.Arbitrary<unknown> = fc.oneof(
    // biome-ignore lint/correctness/noPrecisionLoss: a number literal past the largest double, on purpose
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e309 as number, 2 ** 53 + 2, '1', '', [], {}, ['x'], { a: 1 }, '1e400', '-0', 'NaN', 'Infinity'),
    anyText,
    fc.jsonValue({ maxDepth: 2 }),
  );
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of fieldNames) {
    const good = validish[name];
    entries[name] = fc.option(good === undefined ? wrong : fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: wrong, weight: 1 }), {
      nil: undefined,
      freq: 5,
    });
  }
  return fc
    .tuple(
      fc.record(entries),
      fc.option(
        fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...fieldNames.map((n) => n.toUpperCase()), '__proto__', 'constructor')), wrong, {
          maxKeys: 3,
        }),
        { freq: 4 },
      ),
    )
    .map(([known, unknown]) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(known)) if (v !== undefined) out[k] = v;
      if (unknown !== null)
        for (const [k, v] of Object.entries(unknown)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
}

/** Serialises JSON, writing integers past 2^53 and numbers JSON cannot express as raw digits too. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null';
}

/**
 * Checks the invariants no request, accepted or refused, may break, over the whole database:
 * - every mint job has exactly one batch (none while PREFLIGHTED; FAILED may have none);
 * - batches: 0 <= minted_quantity <= requested_quantity; a serial batch's minted quantity equals
 *   its unit count, and its units' seq are exactly 1..minted_quantity; a COMPLETED job's batch is
 *   fully minted;
 * - no orphans: units, lots and packs belong to an existing batch, batches to an existing job;
 * - mint_kpis counters (summed over a brand's shard rows) equal values recomputed from the rows.
 * Returns one line per broken invariant (empty when all hold).
 */
export async function brokenInvariants(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const checks: Record<string, string> = {
      'job without exactly one batch': `
        select j.id, j.status, count(b.id)::int as batches from mint_jobs j
        left join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id
        group by j.brand_id, j.id, j.status
        having (j.status = 'PREFLIGHTED' and count(b.id) <> 0) or (j.status = 'FAILED' and count(b.id) > 1)
            or (j.status not in ('PREFLIGHTED', 'FAILED') and count(b.id) <> 1)`,
      'batch minted_quantity out of range': `
        select id, minted_quantity, requested_quantity from mint_batches where minted_quantity < 0 or minted_quantity > requested_quantity`,
      'serial batch minted_quantity differs from its units': `
        select b.id, b.minted_quantity, count(u.seq)::int as units, min(u.seq) as min_seq, max(u.seq) as max_seq, count(distinct u.seq)::int as seqs
        from mint_batches b left join mint_units u on u.brand_id = b.brand_id and u.mint_batch_id = b.id
        where b.identity_mode = 'serial'
        group by b.brand_id, b.id, b.minted_quantity
        having count(u.seq) <> b.minted_quantity or count(distinct u.seq) <> count(u.seq)
            or (count(u.seq) > 0 and (min(u.seq) <> 1 or max(u.seq) <> b.minted_quantity))`,
      'COMPLETED job with an incomplete batch': `
        select j.id, b.minted_quantity, b.requested_quantity from mint_jobs j
        join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id
        where j.status = 'COMPLETED' and b.minted_quantity <> b.requested_quantity`,
      'orphan unit': `
        select u.mint_batch_id, u.seq from mint_units u where not exists (select 1 from mint_batches b where b.brand_id = u.brand_id and b.id = u.mint_batch_id)`,
      'orphan lot': `
        select l.mint_batch_id, l.lot_code from mint_lots l where not exists (select 1 from mint_batches b where b.brand_id = l.brand_id and b.id = l.mint_batch_id)`,
      'orphan pack': `
        select k.id from payload_packs k where not exists (select 1 from mint_batches b where b.brand_id = k.brand_id and b.id = k.mint_batch_id)`,
      'batch without its job': `
        select b.id from mint_batches b where not exists (select 1 from mint_jobs j where j.brand_id = b.brand_id and j.id = b.mint_job_id)`,
      'mint_kpis differ from recomputed values': `
        with brands as (select brand_id from mint_batches union select brand_id from mint_kpis),
        expected as (
          select s.brand_id,
            coalesce((select sum(minted_quantity) from mint_batches b where b.brand_id = s.brand_id), 0)::bigint as total_tokens_minted,
            (select count(*) from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id
              where u.brand_id = s.brand_id and u.status = 'active' and b.status <> 'voided')::bigint as active_tokens,
            (select count(*) from mint_batches b where b.brand_id = s.brand_id)::bigint as batches_created,
            coalesce((select sum(b.minted_quantity) from mint_batches b where b.brand_id = s.brand_id and b.status in ('printed', 'applied')), 0)::bigint
              as exported_printed
          from brands s)
        select e.*, k.total_tokens_minted as k_total, k.active_tokens as k_active, k.batches_created as k_batches, k.exported_printed as k_exported
        from expected e left join (
          select brand_id, sum(total_tokens_minted)::bigint as total_tokens_minted, sum(active_tokens)::bigint as active_tokens,
            sum(batches_created)::bigint as batches_created, sum(exported_printed)::bigint as exported_printed
          from mint_kpis group by brand_id) k on k.brand_id = e.brand_id
        where (coalesce(k.total_tokens_minted, 0), coalesce(k.active_tokens, 0), coalesce(k.batches_created, 0), coalesce(k.exported_printed, 0))
          is distinct from (e.total_tokens_minted, e.active_tokens, e.batches_created, e.exported_printed)`,
    };
    const broken: string[] = [];
    for (const [name, sql] of Object.entries(checks)) {
      const { rows } = await client.query(sql);
      if (rows.length > 0) broken.push(`${name}: ${JSON.stringify(rows.slice(0, 5))}${rows.length > 5 ? ` (+${rows.length - 5} more)` : ''}`);
    }
    return broken;
  } finally {
    await client.end();
  }
}

/** Row counts of the tables requests write, to tell whether a refused request wrote anything. */
export async function rowCounts(databaseUrl: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = [
      'mint_jobs',
      'mint_batches',
      'mint_units',
      'mint_lots',
      'mint_preflights',
      'payload_packs',
      'products',
      'production_batches',
      'product_imports',
      'outbox',
      'webhook_endpoints',
      'webhook_deliveries',
    ];
    const { rows } = await client.query<Record<string, string>>(`select ${tables.map((t) => `(select count(*) from ${t}) as ${t}`).join(', ')}`);
    return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
  } finally {
    await client.end();
  }
}

/** A JSON Schema (the 2020-12 subset the OpenAPI document uses). */
type Schema = Record<string, unknown>;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Checks `value` against `schema` of an OpenAPI document (`$ref` into components, type, enum,
 * const, anyOf, oneOf, properties, required, additionalProperties: false, items, minimum,
 * maximum, formats uuid and date-time). Returns one line per mismatch, each with its JSON path.
 */
export function schemaMismatches(document: Schema, schema: Schema, value: unknown, path = '$'): string[] {
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
    if (target === undefined) return [`${path}: unresolvable $ref ${ref}`];
    return schemaMismatches(document, target as Schema, value, path);
  }
  const out: string[] = [];
  const anyOf = schema['anyOf'] as Schema[] | undefined;
  if (anyOf !== undefined && !anyOf.some((s) => schemaMismatches(document, s, value, path).length === 0)) {
    out.push(`${path}: matches none of anyOf (${anyOf.map((s) => schemaMismatches(document, s, value, path)[0]).join(' | ')})`);
  }
  const oneOf = schema['oneOf'] as Schema[] | undefined;
  if (oneOf !== undefined) {
    const matching = oneOf.filter((s) => schemaMismatches(document, s, value, path).length === 0).length;
    if (matching !== 1)
      out.push(`${path}: matches ${matching} of oneOf (${oneOf.map((s) => schemaMismatches(document, s, value, path)[0] ?? 'ok').join(' | ')})`);
  }
  if ('const' in schema && jsonText(schema['const']) !== jsonText(value)) out.push(`${path}: must be ${jsonText(schema['const'])}, is ${jsonText(value)}`);
  const enumValues = schema['enum'] as unknown[] | undefined;
  if (enumValues !== undefined && !enumValues.some((e) => jsonText(e) === jsonText(value)))
    out.push(`${path}: ${jsonText(value)} is not one of ${jsonText(enumValues)}`);
  const type = schema['type'] as string | string[] | undefined;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    const actual = typeOf(value);
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
      out.push(`${path}: must be ${types.join(' or ')}, is ${actual}`);
      return out;
    }
  }
  if (typeof value === 'string') {
    if (schema['format'] === 'uuid' && !uuidPattern.test(value)) out.push(`${path}: ${jsonText(value)} is not a uuid`);
    if (schema['format'] === 'date-time' && (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(Date.parse(value))))
      out.push(`${path}: ${jsonText(value)} is not a date-time`);
  }
  if (typeof value === 'number') {
    if (typeof schema['minimum'] === 'number' && value < schema['minimum']) out.push(`${path}: ${value} < minimum ${schema['minimum']}`);
    if (typeof schema['maximum'] === 'number' && value > schema['maximum']) out.push(`${path}: ${value} > maximum ${schema['maximum']}`);
  }
  if (Array.isArray(value) && schema['items'] !== undefined) {
    for (const [i, item] of value.entries()) out.push(...schemaMismatches(document, schema['items'] as Schema, item, `${path}[${i}]`));
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
    for (const name of (schema['required'] ?? []) as string[]) if (!(name in object)) out.push(`${path}.${name}: is required`);
    for (const [name, v] of Object.entries(object)) {
      if (name in properties) out.push(...schemaMismatches(document, properties[name]!, v, `${path}.${name}`));
      else if (schema['additionalProperties'] === false) out.push(`${path}.${name}: is not a documented property`);
    }
  }
  return out;
}

/** A running API for the fuzz suite, with its log lines. */
export interface FuzzApi {
  readonly baseUrl: string;
  /** Parsed JSON log lines, in order. */
  readonly logs: Record<string, unknown>[];
  /** Stops the server and removes its pack store. */
  close(): Promise<void>;
}

/**
 * Starts the real API on port 0 over `ctx` with every RPC served (SetMintBatchStatus enabled, a
 * pack store and a signing key so download URLs are issued) and its JSON log lines captured.
 */
export async function startFuzzApi(ctx: UseCaseContext): Promise<FuzzApi & { store: PackStore }> {
  const storeDir = await mkdtemp(join(tmpdir(), 'mint-fuzz-packs-'));
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const store = createFsPackStore(storeDir);
  const running = await startApi({
    // Rate limits off: the fuzz sends hundreds of bad credentials from one address, far past the
    // failed-authentication limit (services/api/test/rate-limits.test.ts covers the limits).
    ctx,
    config: {
      port: 0,
      host: '127.0.0.1',
      shutdownTimeoutMs: 2_000,
      rateLimitPerCredential: 0,
      rateLimitResolverPerAddress: 0,
      rateLimitDownloadsPerAddress: 0,
      rateLimitAuthFailuresPerAddress: 0,
      setMintBatchStatusEnabled: true,
    },
    logger: createLogger({ logLevel: 'info' }, {}, destination),
    readiness: async () => ({ ok: true, checks: {} }),
    downloads: { keys: [{ id: 'fuzz', secret: new Uint8Array(32).fill(7) }], store },
  });
  return {
    baseUrl: `http://127.0.0.1:${running.port}`,
    logs,
    store,
    async close() {
      await running.close();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
