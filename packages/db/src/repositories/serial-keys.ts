import { createSerialCipher, isSecretBoxError, openSecret, type SerialCipher, type SerialPosition, type SigningKey } from '@mint/domain';
import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { first, rawRows } from './kysely.ts';

/**
 * Brands' serial keys (serial-cipher.ts): each brand's AES-256 key, sealed with the secret box
 * (WEBHOOK_SECRET_KEYS, like the webhook secrets and the passport signing keys) and bound to its
 * brand, and the brand's counter of batch ordinals. A serial of a batch with an ordinal decodes to
 * (ordinal, seq) under its brand's key, so every lookup by serial decodes first and reads the unit
 * by its primary key; serials that do not decode (minted before) are found through the stored
 * serials' partial index.
 */

/** The context a brand's serial key is sealed for. */
export const serialKeyContext = (brandId: string): string => `brand_serial_keys:${brandId}`;

/**
 * The sealing keys this process opens serial keys with, registered by each use-case context
 * (createUseCaseContext) so that every reader of the process, the resolver's included, opens them.
 * Several keys may share an id (two contexts of one process, each with its own random key): each
 * is tried.
 */
const sealingKeys: SigningKey[] = [];

/** Adds sealing keys to those serial keys are opened with (a key already known is skipped). */
export function registerSerialSealingKeys(keys: readonly SigningKey[]): void {
  for (const key of keys) {
    if (!sealingKeys.some((k) => k.id === key.id && Buffer.from(k.secret).equals(Buffer.from(key.secret)))) sealingKeys.push(key);
  }
}

/** Opens a sealed serial key of `brandId` with any registered key of its id; throws SecretBoxError naming only the key id. */
export function openSerialKey(sealed: string, brandId: string): Uint8Array {
  const kid = sealed.split(':')[2] ?? '';
  const candidates = sealingKeys.filter((k) => k.id === kid);
  let failure: unknown = null;
  for (const key of candidates.length === 0 ? sealingKeys.slice(0, 1) : candidates) {
    try {
      return new Uint8Array(Buffer.from(openSecret([key], sealed, serialKeyContext(brandId)), 'base64'));
    } catch (err) {
      if (!isSecretBoxError(err)) throw err;
      failure = err;
    }
  }
  throw failure ?? new Error(`the serial key of brand ${brandId} is sealed with key ${kid}, which is not configured`);
}

/** Ciphers of the brands seen lately: a brand's key never changes once made, so a cipher is kept until the table is full. */
const ciphers = new Map<string, SerialCipher>();
const maxCiphers = 10_000;

/**
 * The brand's serial cipher, or null while the brand has no serial key (it minted no serial batch
 * since serials were encoded). `load` reads the sealed key (the caller's connection: a unit of work
 * or the resolver's pool); a brand's cipher is read once per process.
 */
export async function serialCipherOf(brandId: string, load: (brandId: string) => Promise<string | null>): Promise<SerialCipher | null> {
  const known = ciphers.get(brandId);
  if (known !== undefined) return known;
  const sealed = await load(brandId);
  if (sealed === null) return null;
  const cipher = createSerialCipher(openSerialKey(sealed, brandId));
  if (ciphers.size >= maxCiphers) ciphers.clear();
  ciphers.set(brandId, cipher);
  return cipher;
}

/** The brand's sealed serial key through `em`, or null. */
export async function findSealedSerialKey(em: Em, brandId: string): Promise<string | null> {
  const row = await first(em, (db) => db.selectFrom('brand_serial_keys').select('key_sealed').where('brand_id', '=', brandId));
  return row?.key_sealed ?? null;
}

/** {@link serialCipherOf} reading through `em`. */
export function brandSerialCipher(em: Em, brandId: string): Promise<SerialCipher | null> {
  return serialCipherOf(brandId, (b) => findSealedSerialKey(em, b));
}

/**
 * Takes the next batch ordinal of the brand, making its serial key row with `sealedKey` (a fresh
 * key sealed for the brand) when it has none; `sealedKey` is dropped when the row exists. One
 * statement: the row lock serialises two takers, so no ordinal is handed out twice (an ordinal
 * taken by a batch that never uses it is a gap, harmless: 2^32 of them per brand).
 */
export async function takeSerialOrdinal(em: Em, brandId: string, sealedKey: () => string, at: Date): Promise<number> {
  const taken = await rawRows(
    em,
    sql<{
      ordinal: string;
    }>`update brand_serial_keys set next_ordinal = next_ordinal + 1 where brand_id = ${brandId}::uuid returning (next_ordinal - 1)::text as ordinal`,
  );
  if (taken[0] !== undefined) return Number(taken[0].ordinal);
  const [row] = await rawRows(
    em,
    sql<{ ordinal: string }>`
    insert into brand_serial_keys (brand_id, key_sealed, next_ordinal, created_at) values (${brandId}::uuid, ${sealedKey()}, 2, ${at}::timestamptz)
    on conflict (brand_id) do update set next_ordinal = brand_serial_keys.next_ordinal + 1
    returning (next_ordinal - 1)::text as ordinal`,
  );
  return Number(row!.ordinal);
}

/**
 * Gives the batch `ordinal` unless it has one, as a compare-and-set that holds only before its
 * first unit (minted_quantity 0): a batch with units minted under random serials keeps them.
 * Returns the batch's ordinal after it: `ordinal`, the one it already had, or null (the batch had
 * units and no ordinal).
 */
export async function assignBatchSerialOrdinal(em: Em, brandId: string, batchId: string, ordinal: number): Promise<number | null> {
  const [set] = await rawRows(
    em,
    sql<{ serial_ordinal: string }>`
    update mint_batches set serial_ordinal = ${ordinal}::bigint
     where brand_id = ${brandId}::uuid and id = ${batchId}::uuid and serial_ordinal is null and minted_quantity = 0
    returning serial_ordinal::text`,
  );
  if (set !== undefined) return Number(set.serial_ordinal);
  const row = await first(em, (db) => db.selectFrom('mint_batches').select('serial_ordinal').where('brand_id', '=', brandId).where('id', '=', batchId));
  return row?.serial_ordinal === null || row?.serial_ordinal === undefined ? null : Number(row.serial_ordinal);
}

/** A serial as a lookup reads it: its encoded position under the brand's key, or null (a serial minted before, or none). */
export interface SerialLookupKey {
  readonly serial: string;
  readonly position: SerialPosition | null;
}

/** The brand's serials with their decoded positions (one pass; positions null when the brand has no key). */
export async function decodeSerials(em: Em, brandId: string, serials: readonly string[]): Promise<SerialLookupKey[]> {
  const cipher = await brandSerialCipher(em, brandId);
  if (cipher === null) return serials.map((serial) => ({ serial, position: null }));
  const positions = cipher.decodeMany(serials);
  return serials.map((serial, i) => ({ serial, position: positions[i] ?? null }));
}

/**
 * `serials` with their decoded positions as three arrays (ordinal and seq null for a serial that
 * does not decode), deduplicated: the parameters of {@link unitKeysOfSerialsText}.
 */
export async function serialKeyArrays(
  em: Em,
  brandId: string,
  serials: readonly string[],
): Promise<{ serials: string[]; ordinals: (number | null)[]; seqs: (number | null)[] }> {
  const keys = await decodeSerials(em, brandId, [...new Set(serials)]);
  return { serials: keys.map((k) => k.serial), ordinals: keys.map((k) => k.position?.batchOrdinal ?? null), seqs: keys.map((k) => k.position?.seq ?? null) };
}

/**
 * The from-item of {@link unitKeysOfSerialsSql} as SQL text, for statements sent on a driver
 * connection: `brand` is the brand id's parameter (`$1`), `serials`, `ordinals` and `seqs` those
 * of {@link serialKeyArrays}' arrays.
 */
export const unitKeysOfSerialsText = (brand: string, serials: string, ordinals: string, seqs: string) => `(
    select k.serial, coalesce(kc.mint_batch_id, kl.mint_batch_id) as mint_batch_id, coalesce(kc.seq, kl.seq) as seq
      from unnest(${serials}::text[], ${ordinals}::bigint[], ${seqs}::int[]) as k(serial, ordinal, seq)
      left join lateral (select kb.id as mint_batch_id, k.seq from mint_batches kb where kb.brand_id = ${brand}::uuid and kb.serial_ordinal = k.ordinal) kc on true
      left join lateral (select ks.mint_batch_id, ks.seq from mint_units ks where ks.brand_id = ${brand}::uuid and ks.serial = k.serial and ks.id is not null offset 0) kl on true
     where coalesce(kc.mint_batch_id, kl.mint_batch_id) is not null)`;

/**
 * The brand's units named by `serials` as (serial, mint_batch_id, seq) rows for a statement to
 * join, one per serial at most: an encoded serial by its batch's ordinal (a unique index probe of
 * mint_batches) and its seq; any other (or an encoded one whose batch has no ordinal, as after a
 * migration's down) through the stored serials' partial index, probed one serial at a time (a
 * lateral subquery kept apart by `offset 0`: with `serial = any(...)` the planner chose a scan of
 * the whole table for 10,000 serials). No union, so Citus plans it on the brand's shard. The caller
 * joins mint_units on (brand_id, mint_batch_id, seq) AND serial, so a decoded position of no unit,
 * or of a unit with another serial, names nothing. Not kept apart by `offset 0` as a whole: so
 * fenced, the planner lost the keys' row estimate and a 60,000-unit container move's lock of its
 * units ran for minutes instead of seconds.
 */
export async function unitKeysOfSerialsSql(em: Em, brandId: string, serials: readonly string[]) {
  const k = await serialKeyArrays(em, brandId, serials);
  return sql<{ serial: string; mint_batch_id: string; seq: number }>`(
    select k.serial, coalesce(kc.mint_batch_id, kl.mint_batch_id) as mint_batch_id, coalesce(kc.seq, kl.seq) as seq
      from unnest(${k.serials}::text[], ${k.ordinals}::bigint[], ${k.seqs}::int[]) as k(serial, ordinal, seq)
      left join lateral (select kb.id as mint_batch_id, k.seq from mint_batches kb where kb.brand_id = ${brandId}::uuid and kb.serial_ordinal = k.ordinal) kc on true
      left join lateral (select ks.mint_batch_id, ks.seq from mint_units ks where ks.brand_id = ${brandId}::uuid and ks.serial = k.serial and ks.id is not null offset 0) kl on true
     where coalesce(kc.mint_batch_id, kl.mint_batch_id) is not null)`;
}
