import { hasDerivedUnitIds, missingAfterPrefix, unitIdPrefix, unitKeyOfId, type SeqRange, type UnitStatus } from '@mint/domain';
import { sql, type RawBuilder } from 'kysely';
import type { Em } from '../orm.ts';
import { first, rawChanged, rows } from './kysely.ts';
import { setLocalSql, timeoutSetting } from './session.ts';

/** One chunk of units of a batch, ready to insert. */
export interface UnitChunk {
  readonly brandId: string;
  readonly mintBatchId: string;
  /** Sequence number of the first serial. */
  readonly firstSeq: number;
  /** Serials in sequence order. */
  readonly serials: readonly string[];
  readonly status: UnitStatus;
  readonly createdAt: Date;
  /**
   * True when the serials are the brand key's encoding of the batch's ordinal and the seqs
   * (serial-cipher.ts): the units then store no id and no serial index entry (the serial decodes to
   * the unit's key). Otherwise (absent) each unit stores its id, which puts its serial in the stored
   * serials' partial index.
   */
  readonly serialsEncoded?: boolean;
}

/**
 * A unit's id in SQL, for the row aliased `alias`: its stored id (units of batches minted before
 * ids were derived), else unitIdOf(mint_batch_id, seq) spelled in SQL (the batch's id with version
 * 8 and the seq in its last four bytes, which are zero in a batch with derived ids).
 */
export function unitIdSql(alias: string): RawBuilder<string> {
  const u = sql.ref(alias);
  return sql<string>`coalesce(${u}.id, overlay(overlay(replace(${u}.mint_batch_id::text, '-', '') placing '8' from 13) placing lpad(to_hex(${u}.seq), 8, '0') from 25)::uuid)`;
}

/** A unit's id as read: its stored id, or the one derived from its batch and seq. */
export function unitIdOfRow(row: { readonly id: string | null; readonly mint_batch_id: string; readonly seq: number }): string {
  if (row.id !== null) return row.id;
  const hex = row.mint_batch_id.replace(/-/g, '');
  const h = `${hex.slice(0, 12)}8${hex.slice(13, 24)}${(row.seq >>> 0).toString(16).padStart(8, '0')}`;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Unit ids split for a lookup: the (batch, seq) keys that derived ids name (unitKeyOfId) and all
 * the ids, which the stored ids' partial index is probed with (a unit minted before, version 4 or 8).
 */
export function unitIdKeys(unitIds: readonly string[]): { batches: string[]; seqs: number[]; ids: string[] } {
  const batches: string[] = [];
  const seqs: number[] = [];
  for (const id of unitIds) {
    const key = unitKeyOfId(id);
    if (key !== null) {
      batches.push(key.mintBatchId);
      seqs.push(key.seq);
    }
  }
  return { batches, seqs, ids: [...unitIds] };
}

/**
 * The brand's units named by `unitIds` as (mint_batch_id, seq) rows, for a statement to join
 * (aliased `alias`): the derived ids' keys, and the stored ids found through their partial index.
 * Ids of no unit name nothing: a derived key is only a key, the caller joins it to mint_units.
 */
export function unitKeysOfIdsSql(brandId: string, unitIds: readonly string[]): RawBuilder<{ mint_batch_id: string; seq: number }> {
  const { batches, seqs, ids } = unitIdKeys(unitIds);
  return sql`(select k.mint_batch_id, k.seq from unnest(${batches}::uuid[], ${seqs}::int[]) as k(mint_batch_id, seq)
    union select s.mint_batch_id, s.seq from mint_units s where s.brand_id = ${brandId}::uuid and s.id = any(${ids}::uuid[]) and s.id is not null)`;
}

/**
 * Inserts a chunk of units with one statement: the serials travel as one array parameter and
 * everything else is derived in SQL, bypassing the ORM's unit of work. A unit whose serial is
 * encoded (a batch with a serial ordinal, whose id is derivable: hasDerivedUnitIds) stores no id:
 * its key is (brand_id, mint_batch_id, seq), and its id is unitIdOf(batch, seq) when read; any
 * other unit stores unitIdOf as its id, which keeps its serial in the stored serials' partial index.
 * A repeated chunk violates the (brand_id, mint_batch_id, seq) primary key and fails instead of
 * minting twice. Measured against COPY FROM STDIN (pg-copy-streams) on the 2-core target: ~45k vs
 * ~33k rows/s on one connection, ~55k vs ~64k on two, so COPY does not pay enough to give up the
 * ORM transaction.
 */
export async function insertUnitChunk(em: Em, chunk: UnitChunk, options: { readonly idleInTransactionTimeoutMs?: number } = {}): Promise<number> {
  // The serials as one array literal: their characters (Crockford base32) need no quoting, and
  // joining them costs a tenth of the driver's encoding of an array element by element (0.06
  // against 0.5 ms per 1,659 serials on the 2-core target).
  const serials = `{${chunk.serials.join(',')}}`;
  if (!/^\{[0-9A-Z,]*\}$/.test(serials)) throw new Error('serials must be made of the characters 0-9 and A-Z only');
  // With `idleInTransactionTimeoutMs`, the statement also sets that timeout for the rest of the
  // transaction (setIdleInTransactionTimeout's, in a CTE evaluated once), sparing the
  // transaction a statement of its own.
  const timeout = options.idleInTransactionTimeoutMs;
  const session =
    timeout === undefined ? sql`` : sql`with session as materialized (select ${setLocalSql('idle_in_transaction_session_timeout', timeoutSetting(timeout))})`;
  if (chunk.serialsEncoded === true && !hasDerivedUnitIds(chunk.mintBatchId))
    throw new Error(`mint batch ${chunk.mintBatchId} has no derived unit ids, so its units cannot go without a stored id`);
  const id =
    chunk.serialsEncoded === true
      ? sql`null::uuid`
      : sql`(${unitIdPrefix(chunk.mintBatchId)}::text || lpad(to_hex(${chunk.firstSeq}::int + s.ord::int - 1), 8, '0'))::uuid`;
  // Raw SQL on purpose: the measured bulk path (figures above); `with ordinality` numbers the serials.
  return rawChanged(
    em,
    sql`
    ${session}
    insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at)
    select ${chunk.brandId}::uuid, ${id},
           ${chunk.mintBatchId}::uuid, ${chunk.firstSeq}::int + s.ord::int - 1, s.serial, ${chunk.status}::text, ${chunk.createdAt}::timestamptz,
           ${chunk.status === 'active' ? chunk.createdAt : null}::timestamptz
    from unnest(${serials}::text[]) with ordinality as s(serial, ord)${timeout === undefined ? sql`` : sql`, session`}`,
  );
}

/**
 * The sequence numbers of a batch still missing from 1..`requested`, as at most `limit` ranges in
 * order. Free when nothing is minted (units commit with the minted quantity, so there are none);
 * cheap when the minted units are exactly 1..`minted` (one index probe for the highest seq);
 * otherwise (writers committed out of order before a crash) one scan of the batch's seqs.
 */
export async function findMissingSeqRanges(em: Em, brandId: string, batchId: string, minted: number, requested: number, limit = 64): Promise<SeqRange[]> {
  if (minted === 0) return missingAfterPrefix(0, requested);
  const top = await first(em, (db) =>
    db
      .selectFrom('mint_units')
      .select((eb) => eb.fn.max('seq').as('max'))
      .where('brand_id', '=', brandId)
      .where('mint_batch_id', '=', batchId),
  );
  if ((top?.max ?? 0) === minted) return missingAfterPrefix(minted, requested);
  const gaps = await rows(em, (db) => {
    // 0 stands before the first seq, so a gap at the start shows like any other.
    const seqs = db
      .selectNoFrom((eb) => eb.cast<number>(eb.lit(0), 'integer').as('seq'))
      .unionAll(db.selectFrom('mint_units').select('seq').where('brand_id', '=', brandId).where('mint_batch_id', '=', batchId));
    const next = db.selectFrom(seqs.as('s')).select((eb) => [
      's.seq',
      eb.fn
        .agg<number>('lead', ['s.seq', eb.lit(1), eb.cast<number>(eb.val(requested + 1), 'integer')])
        .over((ob) => ob.orderBy('s.seq'))
        .as('next_seq'),
    ]);
    return db
      .selectFrom(next.as('t'))
      .select((eb) => [eb('t.seq', '+', 1).as('first_seq'), eb('t.next_seq', '-', 1).as('last_seq')])
      .where((eb) => eb('t.next_seq', '>', eb('t.seq', '+', 1)))
      .orderBy('t.seq')
      .limit(limit);
  });
  return gaps.map((r) => ({ first: r.first_seq, last: r.last_seq }));
}

/**
 * The serials of a batch's units `firstSeq` to `firstSeq + count - 1`, in seq order: the one read
 * by which events naming a unit range list their units' EPCs.
 */
export async function readUnitSerials(em: Em, brandId: string, mintBatchId: string, firstSeq: number, count: number): Promise<string[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_units')
      .select('serial')
      .where('brand_id', '=', brandId)
      .where('mint_batch_id', '=', mintBatchId)
      .where('seq', '>=', firstSeq)
      .where('seq', '<', firstSeq + count)
      .orderBy('seq'),
  );
  return found.map((r) => r.serial);
}
