import type { DecommissionReason, SerialState } from '@mint/domain';
import { mintedSerialState, unitResolverUrl } from '@mint/domain';
import { sql, type RawBuilder } from 'kysely';
import type { Em } from '../orm.ts';
import { changed, first, rawChanged, rawRows, rows } from './kysely.ts';
import { readUnitSerials } from './units.ts';
import { unitKeysOfSerialsSql } from './serial-keys.ts';

/**
 * Serial lifecycle storage. A unit's state is its `unit_states` row when it has one, else the state
 * it was minted in (from `mint_units.status`); `mint_units.status` stays `active` exactly while the
 * unit is commissioned, so the resolver, the scan rules and active_tokens keep reading one column.
 * A move locks the unit rows it reads (in batch and seq order, so two moves never deadlock), so
 * the state it decides on is the state it writes over: a compare-and-set per unit.
 */

/** A unit as a move sees it, read under its row lock. */
export interface UnitForMove {
  readonly mintBatchId: string;
  readonly seq: number;
  readonly serial: string;
  /** The unit's EPC in events: its resolver URL, derived from its batch (a GS1 Digital Link URI for a unit with a GTIN). */
  readonly epc: string;
  readonly state: SerialState;
  readonly reason: DecommissionReason | null;
  readonly batchVoided: boolean;
}

/** Which units a move reads: serials of the brand, or a seq range of one of its batches. */
export type UnitSelector = { readonly serials: readonly string[] } | { readonly mintBatchId: string; readonly fromSeq: number; readonly toSeq: number };

interface UnitMoveRow {
  mint_batch_id: string;
  seq: number;
  serial: string;
  resolver_base_url: string;
  gtin: string | null;
  status: string;
  batch_status: string;
}

/**
 * The brand's units `selector` names with their lifecycle state, locking their unit rows until the
 * transaction ends (unless `lock` is false). Serials the brand has no unit for are simply absent
 * (another brand's are never read). Ordered by batch and seq. With `states: false` the lifecycle
 * rows are not read and every unit is given its minted state: for callers that need only the
 * units' keys (a set-based move reads each state under its lock; at 200,000 units the rows'
 * lookup by `seq = any(...)` filtered every lifecycle row of the batch, growing with each list).
 */
export async function lockUnitsForMove(
  em: Em,
  brandId: string,
  selector: UnitSelector,
  lock = true,
  options: { readonly states?: boolean } = {},
): Promise<UnitForMove[]> {
  // Raw on purpose: `for update of u` on the bulk move's path. The units first, then their state
  // rows per batch by `seq = any(...)`: a join lets the planner pick a nested loop over a scan of
  // unit_states while its statistics still say it is empty (measured: 44 s instead of 1 s for a
  // chunk of 10,000 once the first chunk had written its rows). Listed serials are looked up one by
  // one on the (brand_id, serial) index (a lateral subquery kept apart by `offset 0`): with
  // `serial = any(...)` the planner chose a scan of the whole table for 10,000 serials of a
  // 1,000,000-unit brand (measured: 340 ms of EXPLAIN ANALYZE, 0.5 to 1.5 s per pack of 10,000).
  // Listed serials are decoded first (unitKeysOfSerialsSql): each unit is then one primary-key probe.
  const from =
    'serials' in selector
      ? sql`${await unitKeysOfSerialsSql(em, brandId, selector.serials)} as s
      join mint_units u on u.brand_id = ${brandId}::uuid and u.mint_batch_id = s.mint_batch_id and u.seq = s.seq and u.serial = s.serial`
      : sql`mint_units u`;
  const where =
    'serials' in selector
      ? sql`true`
      : sql`u.mint_batch_id = ${selector.mintBatchId}::uuid and u.seq between ${selector.fromSeq}::int and ${selector.toSeq}::int`;
  const units = await rawRows(
    em,
    sql<UnitMoveRow>`
    select u.mint_batch_id, u.seq, u.serial, b.resolver_base_url, b.gtin, u.status, b.status as batch_status
    from ${from}
    join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id
    where u.brand_id = ${brandId}::uuid and ${where}
    order by u.mint_batch_id, u.seq
    ${lock ? sql`for update of u` : sql``}`,
  );
  const states = new Map<string, { state: string; reason: string | null }>();
  // `states: false` (a caller that only needs the units' keys: a set-based move reads each unit's
  // state itself, under its lock) skips the lifecycle rows: each unit is then read in its minted state.
  for (const [batchId, seqs] of options.states === false ? [] : seqsByBatch(units.map((u) => ({ mintBatchId: u.mint_batch_id, seq: u.seq })))) {
    const found = await rawRows(
      em,
      sql<{ seq: number; state: string; reason: string | null }>`
      select seq, state, reason from unit_states where brand_id = ${brandId}::uuid and mint_batch_id = ${batchId}::uuid and seq = any(${seqs}::int[])`,
    );
    for (const r of found) states.set(`${batchId}/${r.seq}`, r);
  }
  return units.map((r) => {
    const s = states.get(`${r.mint_batch_id}/${r.seq}`);
    return {
      mintBatchId: r.mint_batch_id,
      seq: r.seq,
      serial: r.serial,
      epc: unitResolverUrl(r.resolver_base_url, r.gtin, r.serial),
      state: (s?.state as SerialState | undefined) ?? mintedSerialState(r.status === 'active' ? 'active' : 'inactive'),
      reason: (s?.reason ?? null) as DecommissionReason | null,
      batchVoided: r.batch_status === 'voided',
    };
  });
}

/** Seqs grouped by batch, in order of first appearance. */
function seqsByBatch(units: readonly { readonly mintBatchId: string; readonly seq: number }[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const u of units) {
    const list = out.get(u.mintBatchId);
    if (list === undefined) out.set(u.mintBatchId, [u.seq]);
    else list.push(u.seq);
  }
  return out;
}

/** A move's writes for units already checked under their locks. */
export interface SerialWrite {
  readonly brandId: string;
  readonly moveId: string;
  readonly at: Date;
  readonly to: SerialState;
  readonly reason: DecommissionReason | null;
  /** The units' `mint_units.status` after the move when it changes (commissioning: active; leaving circulation: inactive). */
  readonly unitStatus: 'active' | 'inactive' | null;
  readonly units: readonly { readonly mintBatchId: string; readonly seq: number }[];
}

/**
 * Writes a move: the units' state rows (deleted when the target is a minted state, issued or
 * commissioned; upserted otherwise) and their unit status when circulation changes. Two statements
 * of one `unnest` each, whatever the number of units.
 */
export async function writeSerialMove(em: Em, w: SerialWrite): Promise<void> {
  // Per batch by `seq = any(...)`, never a join with an unnest (see lockUnitsForMove).
  for (const [batchId, seqs] of seqsByBatch(w.units)) {
    if (w.to === 'issued' || w.to === 'commissioned') {
      await rawChanged(em, sql`delete from unit_states where brand_id = ${w.brandId}::uuid and mint_batch_id = ${batchId}::uuid and seq = any(${seqs}::int[])`);
    } else {
      await rawChanged(
        em,
        sql`insert into unit_states (brand_id, mint_batch_id, seq, state, reason, move_id, changed_at)
        select ${w.brandId}::uuid, ${batchId}::uuid, t.q, ${w.to}::text, ${w.reason}::text, ${w.moveId}::uuid, ${w.at}::timestamptz
        from unnest(${seqs}::int[]) as t(q)
        on conflict (brand_id, mint_batch_id, seq) do update set state = excluded.state, reason = excluded.reason, move_id = excluded.move_id, changed_at = excluded.changed_at`,
      );
    }
    if (w.unitStatus !== null) {
      await rawChanged(
        em,
        sql`update mint_units set status = ${w.unitStatus}::text,
          activated_at = ${w.unitStatus === 'active' ? sql`${w.at}::timestamptz` : sql`activated_at`}
        where brand_id = ${w.brandId}::uuid and mint_batch_id = ${batchId}::uuid and seq = any(${seqs}::int[])`,
      );
    }
  }
}

/**
 * Decommissions for `reason` the commissioned units `selector` names, in one statement: a
 * commissioned unit is exactly one whose status is active (it has no lifecycle row) outside a voided
 * batch, so `status = 'active'` is the compare-and-set, and the update itself takes the row locks
 * that {@link lockUnitsForMove} would take first. Writes their lifecycle rows in the same statement
 * and returns the units moved (in batch and seq order). The measured bulk path of recalls:
 * `npm run bench:serials`.
 */
export async function decommissionCommissioned(
  em: Em,
  w: { brandId: string; moveId: string; at: Date; reason: string; selector: UnitSelector },
): Promise<UnitForMove[]> {
  // Listed serials decoded first and joined (not `in (...)`: with 11,000 serials of a 2,100,000-unit
  // brand the planner hashed them against a scan of the whole table, 1.3 s, against 0.6 s of
  // primary-key probes for the join; EXPLAIN ANALYZE on this host).
  const keys = 'serials' in w.selector ? sql`, ${await unitKeysOfSerialsSql(em, w.brandId, w.selector.serials)} as k` : sql``;
  const where =
    'serials' in w.selector
      ? sql`u.mint_batch_id = k.mint_batch_id and u.seq = k.seq and u.serial = k.serial`
      : sql`u.mint_batch_id = ${w.selector.mintBatchId}::uuid and u.seq between ${w.selector.fromSeq}::int and ${w.selector.toSeq}::int`;
  const moved = await rawRows(
    em,
    sql<{ mint_batch_id: string; seq: number; serial: string; resolver_base_url: string; gtin: string | null }>`
    with moved as (
      update mint_units u set status = 'inactive'
      from mint_batches b${keys}
      where u.brand_id = ${w.brandId}::uuid and ${where} and u.status = 'active'
        and b.brand_id = u.brand_id and b.id = u.mint_batch_id and b.status <> 'voided'
      returning u.mint_batch_id, u.seq, u.serial, b.resolver_base_url, b.gtin
    ), states as (
      insert into unit_states (brand_id, mint_batch_id, seq, state, reason, move_id, changed_at)
      select ${w.brandId}::uuid, mint_batch_id, seq, 'decommissioned', ${w.reason}::text, ${w.moveId}::uuid, ${w.at}::timestamptz from moved
      on conflict (brand_id, mint_batch_id, seq) do update set state = excluded.state, reason = excluded.reason, move_id = excluded.move_id, changed_at = excluded.changed_at
    )
    select mint_batch_id, seq, serial, resolver_base_url, gtin from moved order by mint_batch_id, seq`,
  );
  return moved.map((r) => ({
    mintBatchId: r.mint_batch_id,
    seq: r.seq,
    serial: r.serial,
    epc: unitResolverUrl(r.resolver_base_url, r.gtin, r.serial),
    state: 'commissioned',
    reason: null,
    batchVoided: false,
  }));
}

/** Units of a batch that have left their minted state, per state and reason (reconciliation and tests). */
export async function countUnitStates(em: Em, brandId: string, batchId: string): Promise<{ state: string; reason: string | null; count: number }[]> {
  const found = await rawRows(
    em,
    sql<{ state: string; reason: string | null; n: string }>`
    select coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) as state, s.reason, count(*) as n
    from mint_units u
    left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
    where u.brand_id = ${brandId}::uuid and u.mint_batch_id = ${batchId}::uuid
    group by 1, 2 order by 1, 2`,
  );
  return found.map((r) => ({ state: r.state, reason: r.reason, count: Number(r.n) }));
}

/** The lifecycle state of one unit by serial (null when the brand has no such unit). */
export async function readSerialState(
  em: Em,
  brandId: string,
  serial: string,
): Promise<{ state: SerialState; reason: DecommissionReason | null; mintBatchId: string; seq: number } | null> {
  const [row] = await rawRows(
    em,
    sql<{ mint_batch_id: string; seq: number; status: string; state: string | null; reason: string | null }>`
    select u.mint_batch_id, u.seq, u.status, s.state, s.reason
    from ${await unitKeysOfSerialsSql(em, brandId, [serial])} as k
    join mint_units u on u.brand_id = ${brandId}::uuid and u.mint_batch_id = k.mint_batch_id and u.seq = k.seq and u.serial = k.serial
    left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq`,
  );
  if (row === undefined) return null;
  return {
    state: (row.state as SerialState | null) ?? mintedSerialState(row.status === 'active' ? 'active' : 'inactive'),
    reason: row.reason as DecommissionReason | null,
    mintBatchId: row.mint_batch_id,
    seq: row.seq,
  };
}

/** A requested move as stored. */
export interface SerialMoveRecord {
  readonly id: string;
  readonly idempotencyKey: string;
  readonly requestHash: string;
  readonly action: string;
  readonly reason: string | null;
  readonly target: Record<string, unknown>;
  /** running while chunks remain; done; failed when its next chunk failed every attempt (see `error`). */
  readonly status: 'running' | 'done' | 'failed';
  readonly total: number;
  readonly moved: number;
  readonly refused: number;
  readonly nextSeq: number | null;
  /** A container move's position (see SerialMoveRow.cursor); null otherwise. */
  readonly cursor: Record<string, unknown> | null;
  /** Consecutive failed attempts at its next chunk. */
  readonly attempts: number;
  /** Why it failed (status failed), or the last failed attempt's error while it retries; null otherwise. */
  readonly error: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One unit a move refused, as stored in its report (see SerialMoveRefusalRow). */
export interface StoredRefusal {
  readonly serial: string | null;
  readonly mintBatchId: string | null;
  readonly seq: number | null;
  readonly refusal: string;
  readonly state: string | null;
  readonly reason: string | null;
}

type MoveRow = {
  id: string;
  idempotency_key: string;
  request_hash: string;
  action: string;
  reason: string | null;
  target: unknown;
  status: string;
  total: number;
  moved: number;
  refused: number;
  next_seq: number | null;
  cursor: unknown;
  attempts: number;
  error: string | null;
  created_at: string | Date;
  updated_at: string | Date;
};

const parsed = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

function toMove(r: MoveRow): SerialMoveRecord {
  return {
    id: r.id,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    action: r.action,
    reason: r.reason,
    target: parsed<Record<string, unknown>>(r.target),
    status: r.status as 'running' | 'done' | 'failed',
    total: r.total,
    moved: r.moved,
    refused: r.refused,
    nextSeq: r.next_seq,
    cursor: r.cursor === null ? null : parsed<Record<string, unknown>>(r.cursor),
    attempts: r.attempts,
    error: r.error,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

/** A move to record. */
export interface NewSerialMove {
  readonly brandId: string;
  readonly id: string;
  readonly idempotencyKey: string;
  readonly requestHash: string;
  readonly action: string;
  readonly reason: string | null;
  readonly target: Record<string, unknown>;
  readonly total: number;
  readonly nextSeq: number | null;
  readonly actor: string | null;
  readonly at: Date;
}

/**
 * Records a move as running unless the brand already used its idempotency key: true when this call
 * recorded it, false when the key was taken (read the existing move with {@link findSerialMoveByKey}).
 */
export async function insertSerialMove(em: Em, m: NewSerialMove): Promise<boolean> {
  const n = await changed(em, (db) =>
    db
      .insertInto('serial_moves')
      .values({
        brand_id: m.brandId,
        id: m.id,
        idempotency_key: m.idempotencyKey,
        request_hash: m.requestHash,
        action: m.action,
        reason: m.reason,
        target: JSON.stringify(m.target),
        status: 'running',
        total: m.total,
        moved: 0,
        refused: 0,
        next_seq: m.nextSeq,
        actor: m.actor,
        created_at: m.at,
        updated_at: m.at,
      })
      .onConflict((oc) => oc.columns(['brand_id', 'idempotency_key']).doNothing()),
  );
  return n === 1;
}

const moveColumns = [
  'id',
  'idempotency_key',
  'request_hash',
  'action',
  'reason',
  'target',
  'status',
  'total',
  'moved',
  'refused',
  'next_seq',
  'cursor',
  'attempts',
  'error',
  'created_at',
  'updated_at',
] as const;

/** The brand's move with idempotency key `key`, or null. */
export async function findSerialMoveByKey(em: Em, brandId: string, key: string): Promise<SerialMoveRecord | null> {
  const row = await first(em, (db) => db.selectFrom('serial_moves').select(moveColumns).where('brand_id', '=', brandId).where('idempotency_key', '=', key));
  return row === undefined ? null : toMove(row as MoveRow);
}

/** The brand's move `id`, locked until the transaction ends when `lock`; null when not the brand's. */
export async function findSerialMove(em: Em, brandId: string, id: string, lock = false): Promise<SerialMoveRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('serial_moves')
      .select(moveColumns)
      .where('brand_id', '=', brandId)
      .where('id', '=', id)
      .$if(lock, (q) => q.forUpdate()),
  );
  return row === undefined ? null : toMove(row as MoveRow);
}

/**
 * Adds a chunk's outcome to a running move as a compare-and-set on its progress (its moved and
 * refused counts, read under the move's lock): false when another worker recorded the chunk
 * first. The chunk's refused units are appended to the move's report as rows numbered on from
 * the refused count before it, so the report grows by the chunk and is never rewritten; a chunk
 * recorded twice would name the same rows (kept as first written). Clears the failed attempts.
 */
export async function recordSerialMoveChunk(
  em: Em,
  brandId: string,
  id: string,
  chunk: {
    readonly expectedMoved: number;
    readonly expectedRefused: number;
    readonly moved: number;
    readonly refusals: readonly StoredRefusal[];
    readonly nextSeq: number | null;
    readonly done: boolean;
    readonly at: Date;
    /** A container move's position after the chunk. */
    readonly cursor?: Record<string, unknown> | null;
  },
): Promise<boolean> {
  const n = await rawChanged(
    em,
    sql`update serial_moves set moved = moved + ${chunk.moved}::int, refused = refused + ${chunk.refusals.length}::int,
      next_seq = ${chunk.nextSeq}::int,
      cursor = ${chunk.cursor === undefined || chunk.cursor === null ? null : JSON.stringify(chunk.cursor)}::jsonb,
      status = ${chunk.done ? 'done' : 'running'}::text, updated_at = ${chunk.at}::timestamptz, attempts = 0, not_before = null, error = null
    where brand_id = ${brandId}::uuid and id = ${id}::uuid and status = 'running'
      and moved = ${chunk.expectedMoved}::int and refused = ${chunk.expectedRefused}::int`,
  );
  if (n !== 1) return false;
  if (chunk.refusals.length > 0) {
    const r = chunk.refusals;
    // One statement of one unnest per chunk, whatever the number of refused units.
    await rawChanged(
      em,
      sql`insert into serial_move_refusals (brand_id, move_id, ord, serial, mint_batch_id, seq, refusal, state, reason)
      select ${brandId}::uuid, ${id}::uuid, ${chunk.expectedRefused}::int + (t.n - 1)::int, t.serial, t.mint_batch_id, t.seq, t.refusal, t.state, t.reason
      from unnest(${r.map((x) => x.serial)}::text[], ${r.map((x) => x.mintBatchId)}::uuid[], ${r.map((x) => x.seq)}::int[],
        ${r.map((x) => x.refusal)}::text[], ${r.map((x) => x.state)}::text[], ${r.map((x) => x.reason)}::text[])
        with ordinality as t(serial, mint_batch_id, seq, refusal, state, reason, n)
      on conflict (brand_id, move_id, ord) do nothing`,
    );
  }
  return true;
}

/** A page of a move's refused units in report order: those after place `after` (-1: from the first), at most `limit`, each with its place. */
export async function readSerialMoveRefusals(
  em: Em,
  brandId: string,
  moveId: string,
  after: number,
  limit: number,
): Promise<(StoredRefusal & { readonly ord: number })[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('serial_move_refusals')
      .select(['ord', 'serial', 'mint_batch_id', 'seq', 'refusal', 'state', 'reason'])
      .where('brand_id', '=', brandId)
      .where('move_id', '=', moveId)
      .where('ord', '>', after)
      .orderBy('ord')
      .limit(limit),
  );
  return found.map((r) => ({ ord: r.ord, serial: r.serial, mintBatchId: r.mint_batch_id, seq: r.seq, refusal: r.refusal, state: r.state, reason: r.reason }));
}

/**
 * Counts one more failed attempt at a running move's next chunk (in a transaction of its own: the
 * chunk's rolled back), keeping `error` (cut to 2,000 characters): with `failAt` set the move
 * fails (status failed); otherwise no worker claims it before `notBefore`. Returns the attempts
 * counted, or null when the move is no longer running.
 */
export async function recordSerialMoveFailure(
  em: Em,
  brandId: string,
  id: string,
  f: { readonly error: string; readonly at: Date; readonly notBefore: Date | null; readonly fail: boolean },
): Promise<number | null> {
  const [row] = await rawRows(
    em,
    sql<{ attempts: number }>`update serial_moves set attempts = attempts + 1, error = ${f.error.slice(0, 2000)}::text,
      not_before = ${f.notBefore}::timestamptz, status = ${f.fail ? 'failed' : 'running'}::text, updated_at = ${f.at}::timestamptz
    where brand_id = ${brandId}::uuid and id = ${id}::uuid and status = 'running'
    returning attempts`,
  );
  return row?.attempts ?? null;
}

/**
 * Locks the running move (any brand) touched longest ago, past its retry backoff, that no other
 * transaction holds (`skip locked`), until the transaction ends: the executor's claim of its next
 * chunk. A worker that dies mid-chunk rolls back and releases it, so the next claim redoes exactly
 * that chunk; a chunk that fails is put back with a backoff (see {@link recordSerialMoveFailure})
 * so it never stays first in line. Null when none.
 */
export async function claimRunningSerialMove(em: Em, now: Date): Promise<{ brandId: string; id: string; attempts: number } | null> {
  // Candidates first without a lock (on Citus a locking read must name its brand: one shard), then
  // each locked on its own brand's row, skipping one another worker holds.
  const candidates = await rows(em, (db) =>
    db
      .selectFrom('serial_moves')
      .select(['brand_id', 'id'])
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
      .orderBy('updated_at')
      .limit(8),
  );
  for (const c of candidates) {
    const locked = await rows(em, (db) =>
      db
        .selectFrom('serial_moves')
        .select(['brand_id', 'id', 'attempts'])
        .where('brand_id', '=', c.brand_id)
        .where('id', '=', c.id)
        .where('status', '=', 'running')
        .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
        .forUpdate()
        .skipLocked(),
    );
    if (locked[0] !== undefined) return { brandId: locked[0].brand_id, id: locked[0].id, attempts: locked[0].attempts };
  }
  return null;
}

/** An EPCIS event to store. */
export interface NewEpcisEvent {
  readonly brandId: string;
  readonly id: string;
  readonly moveId: string | null;
  readonly eventType: string;
  readonly eventTime: Date;
  readonly recordTime: Date;
  readonly bizStep: string;
  readonly disposition: string | null;
  readonly epcs: readonly string[];
  readonly body: Record<string, unknown>;
  /** The partner that reported it (or was allocated its serials); absent or null: the brand's own. */
  readonly partnerId?: string | null;
  /** Units the event names as a range instead of listing them (then `epcs` is empty and `body` has no `epcList`). */
  readonly units?: EpcisUnitRange;
}

/** Units of one batch an event names as a range, seqs `firstSeq` to `firstSeq + count - 1`. */
export interface EpcisUnitRange {
  readonly mintBatchId: string;
  readonly firstSeq: number;
  readonly count: number;
}

/** Stores events; an event id stored before is kept as it was (a repeated chunk writes no duplicate). */
export async function insertEpcisEvents(em: Em, events: readonly NewEpcisEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  return changed(em, (db) =>
    db
      .insertInto('epcis_events')
      .values(
        events.map((e) => ({
          brand_id: e.brandId,
          id: e.id,
          move_id: e.moveId,
          event_type: e.eventType,
          event_time: e.eventTime,
          record_time: e.recordTime,
          biz_step: e.bizStep,
          disposition: e.disposition,
          epcs: [...e.epcs],
          body: JSON.stringify(e.body),
          partner_id: e.partnerId ?? null,
          mint_batch_id: e.units?.mintBatchId ?? null,
          first_seq: e.units?.firstSeq ?? null,
          unit_count: e.units?.count ?? null,
        })),
      )
      .onConflict((oc) => oc.columns(['brand_id', 'id']).doNothing()),
  );
}

/** Filters of the EPCIS query subset. */
export interface EpcisQuery {
  readonly brandId: string;
  readonly bizSteps?: readonly string[];
  readonly dispositions?: readonly string[];
  /** Events naming any of these EPCs, or (with `units`) naming any of these units in a range. */
  readonly epcs?: readonly string[];
  /** The units of the `epcs` (found by serial): events whose unit range holds one match too. */
  readonly units?: readonly { readonly mintBatchId: string; readonly seq: number }[];
  readonly geEventTime?: Date;
  readonly ltEventTime?: Date;
  /** Only the events of this partner (a partner key's query); absent: every event of the brand. */
  readonly partnerId?: string;
  /** Keyset position: the last event of the previous page. */
  readonly after?: { readonly eventTime: Date; readonly id: string };
  readonly limit: number;
}

/** A stored event as read: an event naming a unit range has its `units` and a body without `epcList` until {@link expandEpcisUnitRanges}. */
export interface StoredEpcisEvent {
  readonly id: string;
  readonly eventTime: Date;
  readonly body: Record<string, unknown>;
  readonly units: EpcisUnitRange | null;
}

/** Stored events matching `q`, oldest first by event time then id; unit ranges not expanded. */
export async function queryEpcisEvents(em: Em, q: EpcisQuery): Promise<StoredEpcisEvent[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('epcis_events')
      .select(['id', 'event_time', 'body', 'mint_batch_id', 'first_seq', 'unit_count'])
      .where('brand_id', '=', q.brandId)
      .$if(q.partnerId !== undefined, (w) => w.where('partner_id', '=', q.partnerId!))
      .$if(q.bizSteps !== undefined, (w) => w.where('biz_step', 'in', [...q.bizSteps!]))
      .$if(q.dispositions !== undefined, (w) => w.where('disposition', 'in', [...q.dispositions!]))
      // A listed EPC by the GIN index on `epcs`; a unit in a range by the (brand_id, mint_batch_id, first_seq) index.
      .$if(q.epcs !== undefined, (w) =>
        w.where((eb) =>
          eb.or([
            sql<boolean>`epcs && ${[...q.epcs!]}::text[]`,
            ...(q.units ?? []).map((u) =>
              eb.and([eb('mint_batch_id', '=', u.mintBatchId), eb('first_seq', '<=', u.seq), sql<boolean>`first_seq + unit_count > ${u.seq}::int`]),
            ),
          ]),
        ),
      )
      .$if(q.geEventTime !== undefined, (w) => w.where('event_time', '>=', q.geEventTime!))
      .$if(q.ltEventTime !== undefined, (w) => w.where('event_time', '<', q.ltEventTime!))
      .$if(q.after !== undefined, (w) =>
        w.where((eb) => eb.or([eb('event_time', '>', q.after!.eventTime), eb.and([eb('event_time', '=', q.after!.eventTime), eb('id', '>', q.after!.id)])])),
      )
      .orderBy('event_time')
      .orderBy('id')
      .limit(q.limit),
  );
  return found.map((r) => ({
    id: r.id,
    eventTime: new Date(r.event_time),
    body: parsed<Record<string, unknown>>(r.body),
    units: r.mint_batch_id === null ? null : { mintBatchId: r.mint_batch_id, firstSeq: r.first_seq!, count: r.unit_count! },
  }));
}

/**
 * The events' bodies with the `epcList` of each event naming a unit range: its units' GS1 Digital
 * Link URIs in seq order, from their serials and their batch's resolver base and GTIN (as when the
 * event listed them). Reads as many units as the ranges hold: the caller bounds them.
 */
export async function expandEpcisUnitRanges(
  em: Em,
  brandId: string,
  events: readonly { readonly body: Record<string, unknown>; readonly units: EpcisUnitRange | null }[],
): Promise<Record<string, unknown>[]> {
  const batches = new Map<string, { resolver_base_url: string; gtin: string | null } | undefined>();
  const out: Record<string, unknown>[] = [];
  for (const e of events) {
    if (e.units === null) {
      out.push(e.body);
      continue;
    }
    const { mintBatchId, firstSeq, count } = e.units;
    if (!batches.has(mintBatchId)) {
      batches.set(
        mintBatchId,
        await first(em, (db) =>
          db.selectFrom('mint_batches').select(['resolver_base_url', 'gtin']).where('brand_id', '=', brandId).where('id', '=', mintBatchId),
        ),
      );
    }
    const batch = batches.get(mintBatchId);
    if (batch === undefined) throw new Error(`EPCIS event ${String(e.body['eventID'])} names units of batch ${mintBatchId}, which the brand does not have`);
    const serials = await readUnitSerials(em, brandId, mintBatchId, firstSeq, count);
    out.push({ ...e.body, epcList: serials.map((serial) => unitResolverUrl(batch.resolver_base_url, batch.gtin, serial)) });
  }
  return out;
}

/** Marks a move that was applied whole in its own transaction (a captured event's) done with `moved` units. */
export async function finishSerialMove(em: Em, brandId: string, id: string, moved: number, at: Date): Promise<void> {
  await changed(em, (db) => db.updateTable('serial_moves').set({ status: 'done', moved, updated_at: at }).where('brand_id', '=', brandId).where('id', '=', id));
}

/** Which of `ids` the brand has stored as EPCIS events, each with the partner that reported it (null: the brand). */
export async function readEpcisEventIds(em: Em, brandId: string, ids: readonly string[]): Promise<{ id: string; partnerId: string | null }[]> {
  if (ids.length === 0) return [];
  const found = await rows(em, (db) =>
    db
      .selectFrom('epcis_events')
      .select(['id', 'partner_id'])
      .where('brand_id', '=', brandId)
      .where((eb) => eb('id', '=', eb.fn.any(eb.cast<string[]>(eb.val([...ids]), sql`uuid[]`)))),
  );
  return found.map((r) => ({ id: r.id, partnerId: r.partner_id ?? null }));
}

/**
 * The latest stored event of the brand, other than `exceptId`, that names any of `epcs`, with the
 * first of `epcs` it names; null when none does. By the GIN index on the events' EPCs.
 */
export async function latestEventNaming(em: Em, brandId: string, epcs: readonly string[], exceptId: string): Promise<{ eventTime: Date; epc: string } | null> {
  if (epcs.length === 0) return null;
  const found = await rows(em, (db) =>
    db
      .selectFrom('epcis_events')
      .select(['event_time', 'epcs'])
      .where('brand_id', '=', brandId)
      .where(sql<boolean>`epcs && ${[...epcs]}::text[]`)
      .where('id', '<>', exceptId)
      .orderBy('event_time', 'desc')
      .limit(1),
  );
  const latest = found[0];
  if (latest === undefined) return null;
  const named = new Set(latest.epcs as string[]);
  return { eventTime: new Date(latest.event_time), epc: epcs.find((e) => named.has(e)) ?? epcs[0]! };
}

/** EPCs one statement of {@link latestEventTimeNaming} searches. */
const eventTimeSlice = 1000;

/**
 * The time of the latest stored event of the brand that names any of `epcs`; null when none does.
 * For thousands of EPCs at once (a captured document's), inside the caller's transaction. Only
 * the GIN index on the events' EPCs answers this in time: `&&` compares two arrays element by
 * element, so a scan of events naming 10,000 EPCs each against 11,000 EPCs ran for minutes
 * (seen on a 1,000,000-unit brand with 177 events, where the planner's choice was a scan). The
 * statement runs with sequential and plain index scans (and JIT, which their disabling cost
 * triggers) off for its duration, the brand compared as text so that no other index applies, and
 * the settings put back after it.
 */
export async function latestEventTimeNaming(em: Em, brandId: string, epcs: readonly string[]): Promise<Date | null> {
  if (epcs.length === 0) return null;
  const settings = ['enable_seqscan', 'enable_indexscan', 'jit'] as const;
  const [before] = await rawRows(
    em,
    sql<Record<(typeof settings)[number], string>>`
    select current_setting('enable_seqscan') as enable_seqscan, current_setting('enable_indexscan') as enable_indexscan, current_setting('jit') as jit,
      set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true), set_config('jit', 'off', true)`,
  );
  // By slices of EPCs: the index checks every event it finds against every EPC searched, so 51,000
  // EPCs at once (a document of 1,000 pallets of 50 cases) against the 50,000 events naming them
  // ran for minutes; a slice of 1,000 is checked in milliseconds.
  const distinct = [...new Set(epcs)];
  let latest: Date | null = null;
  for (let i = 0; i < distinct.length; i += eventTimeSlice) {
    const found = await rawRows(
      em,
      sql<{ at: Date | string | null }>`
      with hit as materialized (select event_time from epcis_events where epcs && ${distinct.slice(i, i + eventTimeSlice)}::text[] and brand_id::text = ${brandId}::text)
      select max(event_time) as at from hit`,
    );
    const at = found[0]?.at ?? null;
    if (at !== null && (latest === null || new Date(at) > latest)) latest = new Date(at);
  }
  // Put back for the rest of the transaction (a failed statement ends it, and its settings with it).
  await rawRows(em, sql`select ${sql.join(settings.map((name) => sql`set_config(${name}::text, ${before![name]}::text, true)`))}`);
  return latest;
}

/** The latest mint time (`mint_units.created_at`) among `units`, with that unit's serial; null for none. */
export async function latestMintOf(
  em: Em,
  brandId: string,
  units: readonly { readonly mintBatchId: string; readonly seq: number }[],
): Promise<{ mintedAt: Date; serial: string } | null> {
  let latest: { mintedAt: Date; serial: string } | null = null;
  for (const [batchId, seqs] of seqsByBatch(units)) {
    const found = await rawRows(
      em,
      sql<{ serial: string; created_at: Date }>`
      select serial, created_at from mint_units where brand_id = ${brandId}::uuid and mint_batch_id = ${batchId}::uuid and seq = any(${seqs}::int[])
      order by created_at desc limit 1`,
    );
    const row = found[0];
    if (row !== undefined && (latest === null || new Date(row.created_at) > latest.mintedAt))
      latest = { mintedAt: new Date(row.created_at), serial: row.serial };
  }
  return latest;
}

/** The EPCIS ObjectEvent a range move writes for the units it moves out of some of its source states. */
export interface RangeMoveEvent {
  /** The source states whose units this event lists. */
  readonly states: readonly SerialState[];
  readonly id: string;
  readonly bizStep: string;
  readonly disposition: string;
  /** The event as JSON-LD without its epcList, which the statement fills with the units' EPCs in seq order. */
  readonly body: Record<string, unknown>;
}

/** A move of one seq range of one batch (a chunk of a batch or range move), checked and applied in the database. */
export interface RangeMove {
  readonly brandId: string;
  readonly moveId: string;
  readonly mintBatchId: string;
  readonly fromSeq: number;
  readonly toSeq: number;
  /** Only these seqs of the range (the units of a container chunk, in order); every seq of the range when absent. */
  readonly seqs?: readonly number[];
  readonly at: Date;
  /** States the move may leave, and for a reactivation the reasons that allow it (null: any). */
  readonly from: readonly SerialState[];
  readonly fromReasons: readonly DecommissionReason[] | null;
  readonly to: SerialState;
  readonly reason: DecommissionReason | null;
  /** The units' `mint_units.status` after the move when it changes (see {@link SerialWrite}). */
  readonly unitStatus: 'active' | 'inactive' | null;
  /** One event per EPCIS vocabulary, covering every source state between them. */
  readonly events: readonly RangeMoveEvent[];
  /** Serials of the moved units to return, lowest seq first (for the audit event). */
  readonly serialsToName: number;
  /**
   * A partner's move: only the units allocated to this partner move, the others are refused as not
   * allocated (their state not told), and its EPCIS events are the partner's. Absent or null: the brand's.
   */
  readonly partnerId?: string | null;
}

/** A unit of a range that did not move, with the state it is in. */
export interface RangeRefusal {
  readonly seq: number;
  /** Null for a seq the batch has no unit for. */
  readonly serial: string | null;
  readonly state: SerialState | null;
  readonly reason: DecommissionReason | null;
  readonly batchVoided: boolean;
  /** A partner's move: the unit is not allocated to it (state and reason are then null). */
  readonly notAllocated?: boolean;
}

/** What a range move did. */
export interface RangeMoved {
  readonly moved: number;
  /** The first {@link RangeMove.serialsToName} serials moved, in seq order. */
  readonly serials: readonly string[];
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
  /** Every unit of the range that did not move (and every seq without a unit), in seq order. */
  readonly refused: readonly RangeRefusal[];
}

/**
 * Applies a move to the seq range of one batch inside the caller's transaction, set-based: no unit
 * goes to the client and back. Each unit is a compare-and-set under its row lock:
 * - decommissioning (the bulk path of recalls) is one statement whose update is the compare-and-set,
 *   `status = 'active'` being exactly a commissioned unit (it has no lifecycle row), and whose
 *   update takes the row locks;
 * - every other move locks the range's unit rows first (in seq order, as {@link lockUnitsForMove}),
 *   then one statement reads each unit's state and moves those in a source state.
 * Decommissioning inserts its lifecycle rows without a conflict clause (40 % cheaper than an
 * upsert, measured): a commissioned unit has none, and a row there would be a broken invariant
 * that the primary key reports instead of overwriting.
 * The same statement writes the lifecycle rows, the unit statuses and the EPCIS events (one per
 * vocabulary, its EPCs built from the batch's resolver base, so an event is bounded by the chunk).
 * The units that did not move are read afterwards only when some did not (their number is known
 * from the range), to report why. A voided batch moves nothing: every unit is refused.
 * Measured (`npm run bench:serials`, EXPLAIN ANALYZE of a 10,000-unit chunk): the unit update is
 * the bare UPDATE's own cost; the lifecycle rows, the EPCIS event and its GIN entries add about as
 * much again; reading the chunk's units back into the process and the lifecycle rows by
 * `seq = any(10,000 seqs)` (a filter over every row of the batch, 1 s by the 2nd chunk) are gone.
 */
export async function moveUnitRange(em: Em, m: RangeMove): Promise<RangeMoved> {
  const { brandId, mintBatchId: batchId, fromSeq: f, toSeq: t } = m;
  // A share lock on the batch, as activations take: a void waits for this chunk (and counts the
  // units it took out of circulation), or this chunk waits for the void and moves nothing.
  const batch = await first(em, (db) =>
    db.selectFrom('mint_batches').select(['resolver_base_url', 'gtin', 'status']).where('brand_id', '=', brandId).where('id', '=', batchId).forShare(),
  );
  const span = m.seqs?.length ?? t - f + 1;
  // A list of seqs is a filter within the range's index scan (a hashed array), never a join the planner may turn into a scan of the batch.
  const only = (column: string) => (m.seqs === undefined ? sql`` : sql`and ${sql.ref(column)} = any(${[...m.seqs]}::int[])`);
  if (batch === undefined) return { moved: 0, serials: [], firstSeq: null, lastSeq: null, refused: await rangeRefusals(em, m, false) };
  if (batch.status === 'voided') return { moved: 0, serials: [], firstSeq: null, lastSeq: null, refused: await rangeRefusals(em, m, true) };
  const prefix = unitResolverUrl(batch.resolver_base_url, batch.gtin, '');
  const groups = m.events.map((e) => e.id);
  const stateGroups = m.events.flatMap((e, i) => e.states.map((s) => [s, i] as const));
  const toMinted = m.to === 'issued' || m.to === 'commissioned';
  // The units this statement moves, each with its source state.
  const decommission = m.from.length === 1 && m.from[0] === 'commissioned' && m.to === 'decommissioned';
  const partnerId = m.partnerId ?? null;
  if (decommission && partnerId !== null) throw new Error('a partner move never decommissions');
  // A partner's move: whether each unit is allocated to it, on the allocation's key.
  const allocated =
    partnerId === null
      ? sql`true`
      : sql`exists (select 1 from unit_allocations a where a.brand_id = u.brand_id and a.mint_batch_id = u.mint_batch_id and a.seq = u.seq and a.partner_id = ${partnerId}::uuid)`;
  let units: RawBuilder<unknown>;
  if (decommission) {
    units = sql`moved as materialized (
      update mint_units u set status = 'inactive'
      where u.brand_id = ${brandId}::uuid and u.mint_batch_id = ${batchId}::uuid and u.seq between ${f}::int and ${t}::int ${only('u.seq')} and u.status = 'active'
      returning u.seq, u.serial, 'commissioned'::text as state
    ),
    refused as (select null::int as seq, null::text as serial, null::text as state, null::text as reason, true as allocated where false),
    found as (select null::int as seq where false)`;
  } else {
    await rawRows(
      em,
      sql`select count(*) from (select 1 from mint_units where brand_id = ${brandId}::uuid and mint_batch_id = ${batchId}::uuid
      and seq between ${f}::int and ${t}::int ${only('seq')} order by seq for update) as locked`,
    );
    // With the units locked, their lifecycle rows are the ones this statement reads: each looked up on its key (see lockUnitsForMove).
    units = sql`found as materialized (
      select u.seq, u.serial, coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) as state, s.reason, ${allocated} as allocated
      from mint_units u
      left join lateral (select state, reason from unit_states s where s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq offset 0) s on true
      where u.brand_id = ${brandId}::uuid and u.mint_batch_id = ${batchId}::uuid and u.seq between ${f}::int and ${t}::int ${only('u.seq')}
    ),
    moved as materialized (
      select seq, serial, state from found
      where allocated and state = any(${[...m.from]}::text[]) ${m.fromReasons === null ? sql`` : sql`and reason = any(${[...m.fromReasons]}::text[])`}
    ),
    refused as (select seq, serial, state, reason, allocated from found where seq not in (select seq from moved))`;
  }
  // Each lifecycle row and unit status below is keyed by (brand_id, mint_batch_id, seq) within the range.
  const inRange = (alias: string) => sql`${sql.ref(`${alias}.brand_id`)} = ${brandId}::uuid and ${sql.ref(`${alias}.mint_batch_id`)} = ${batchId}::uuid
    and ${sql.ref(`${alias}.seq`)} between ${f}::int and ${t}::int and ${sql.ref(`${alias}.seq`)} in (select seq from moved)`;
  const [row] = await rawRows(
    em,
    sql<{
      moved: number;
      found: number;
      serials: string[] | null;
      first_seq: number | null;
      last_seq: number | null;
      refused: { seq: number; serial: string; state: string; reason: string | null; allocated: boolean }[] | null;
    }>`
    with ${units},
    statuses as (
      update mint_units u set status = ${m.unitStatus}::text,
        activated_at = ${m.unitStatus === 'active' ? sql`${m.at}::timestamptz` : sql`u.activated_at`}
      where ${!decommission && m.unitStatus !== null ? sql`true` : sql`false`} and ${inRange('u')}
    ),
    cleared as (
      delete from unit_states s where ${toMinted ? sql`true` : sql`false`} and ${inRange('s')}
    ),
    states as (
      insert into unit_states (brand_id, mint_batch_id, seq, state, reason, move_id, changed_at)
      select ${brandId}::uuid, ${batchId}::uuid, seq, ${m.to}::text, ${m.reason}::text, ${m.moveId}::uuid, ${m.at}::timestamptz from moved
      where ${toMinted ? sql`false` : sql`true`}
      ${decommission ? sql`` : sql`on conflict (brand_id, mint_batch_id, seq) do update set state = excluded.state, reason = excluded.reason, move_id = excluded.move_id, changed_at = excluded.changed_at`}
    ),
    grouped as (
      ${
        m.events.length === 1
          ? sql`select 0 as i, array_agg(${prefix}::text || moved.serial order by moved.seq) as epcs from moved having count(*) > 0`
          : sql`select g.i, array_agg(${prefix}::text || moved.serial order by moved.seq) as epcs
      from moved join unnest(${stateGroups.map(([s]) => s)}::text[], ${stateGroups.map(([, i]) => i)}::int[]) as g(state, i) on g.state = moved.state
      group by g.i`
      }
    ),
    events as (
      insert into epcis_events (brand_id, id, move_id, event_type, event_time, record_time, biz_step, disposition, epcs, body, partner_id)
      select ${brandId}::uuid, e.id, ${m.moveId}::uuid, 'ObjectEvent', ${m.at}::timestamptz, ${m.at}::timestamptz, e.biz_step, e.disposition, grouped.epcs,
        e.body || jsonb_build_object('epcList', to_jsonb(grouped.epcs)), ${partnerId}::uuid
      from grouped
      join unnest(${groups}::uuid[], ${m.events.map((e) => e.bizStep)}::text[], ${m.events.map((e) => e.disposition)}::text[],
        ${m.events.map((e) => JSON.stringify(e.body))}::jsonb[]) with ordinality as e(id, biz_step, disposition, body, n) on e.n = grouped.i + 1
      on conflict (brand_id, id) do nothing
    )
    select n.moved, n.first_seq, n.last_seq,
      (select array_agg(serial order by seq) from (select serial, seq from moved order by seq limit ${m.serialsToName}::int) x) as serials,
      (select count(*) from found)::int as found,
      (select jsonb_agg(jsonb_build_object('seq', seq, 'serial', serial, 'state', state, 'reason', reason, 'allocated', allocated) order by seq) from refused) as refused
    from (select count(*)::int as moved, min(seq) as first_seq, max(seq) as last_seq from moved) n`,
  );
  const n = row?.moved ?? 0;
  const done = { moved: n, serials: row?.serials ?? [], firstSeq: row?.first_seq ?? null, lastSeq: row?.last_seq ?? null };
  if (n === span) return { ...done, refused: [] };
  // Decommissioning reads why the other units did not move afterwards: its update decided on their status, under their locks.
  if (decommission) return { ...done, refused: await rangeRefusals(em, m, false) };
  const refused: RangeRefusal[] = (row?.refused ?? []).map((r) =>
    r.allocated
      ? { seq: r.seq, serial: r.serial, state: r.state as SerialState, reason: r.reason as DecommissionReason | null, batchVoided: false }
      : { seq: r.seq, serial: r.serial, state: null, reason: null, batchVoided: false, notAllocated: true },
  );
  if ((row?.found ?? 0) < span) {
    const missing = await rawRows(
      em,
      sql<{ seq: number }>`select g.seq from ${m.seqs === undefined ? sql`generate_series(${f}::int, ${t}::int)` : sql`unnest(${[...m.seqs]}::int[])`} as g(seq)
      where not exists (select 1 from mint_units u where u.brand_id = ${brandId}::uuid and u.mint_batch_id = ${batchId}::uuid and u.seq = g.seq)`,
    );
    refused.push(...missing.map((r) => ({ seq: r.seq, serial: null, state: null, reason: null, batchVoided: false })));
    refused.sort((a, b) => a.seq - b.seq);
  }
  return { ...done, refused };
}

/**
 * The units of a range that a decommissioning did not move (every one when `voided`: nothing
 * moved), with their states, and the seqs without a unit, in seq order. Runs after the move in its
 * transaction: a unit it moved has its lifecycle row by this move (the others are read as they are
 * now, as lockUnitsForMove reads them after decommissionCommissioned).
 */
async function rangeRefusals(em: Em, m: RangeMove, voided: boolean): Promise<RangeRefusal[]> {
  const found = await rawRows(
    em,
    sql<{ seq: number; serial: string | null; state: string | null; reason: string | null }>`
    select g.seq, u.serial, case when u.seq is null then null else coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) end as state,
      s.reason
    from ${m.seqs === undefined ? sql`generate_series(${m.fromSeq}::int, ${m.toSeq}::int)` : sql`unnest(${[...m.seqs]}::int[])`} as g(seq)
    left join lateral (select seq, serial, status from mint_units u where u.brand_id = ${m.brandId}::uuid and u.mint_batch_id = ${m.mintBatchId}::uuid and u.seq = g.seq offset 0) u on true
    left join lateral (select state, reason, move_id from unit_states s where s.brand_id = ${m.brandId}::uuid and s.mint_batch_id = ${m.mintBatchId}::uuid and s.seq = g.seq offset 0) s on true
    where s.move_id is distinct from ${m.moveId}::uuid
    order by g.seq`,
  );
  return found.map((r) => ({
    seq: r.seq,
    serial: r.serial,
    state: r.state as SerialState | null,
    reason: r.reason as DecommissionReason | null,
    batchVoided: voided && r.serial !== null,
  }));
}
