import { unitResolverUrl } from '@mint/domain';
import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { changed, first, rawChanged, rawRows, rows } from './kysely.ts';

/**
 * Partner allocation storage: partners, their keys' grants (restriction and quota), allocation
 * requests and the partner of every allocated unit. A unit is allocated by inserting its
 * `unit_allocations` row: the primary key is the compare-and-set, and the row is never deleted.
 */

/**
 * Runs `work` with one planner method off for the statements it sends, inside the caller's
 * transaction (or one of its own): `unit_allocations` and `unit_states` fill in bulk right after
 * they are created, before any ANALYZE, and while their statistics still say they are empty the
 * planner rescans them inside nested loops. Measured at 10,000 units on the loaded 2-core
 * machine: the reconciliation's per-partner count took ~60 s that way, ~1 s with hash joins.
 */
async function withPlanner<T>(em: Em, setting: 'enable_nestloop', work: (tx: Em) => Promise<T>): Promise<T> {
  return em.transactional(async (tx) => {
    await rawChanged(tx, sql`select set_config(${setting}, 'off', true)`);
    try {
      return await work(tx);
    } finally {
      await rawChanged(tx, sql`select set_config(${setting}, 'on', true)`);
    }
  });
}

/** A partner as stored. */
export interface PartnerRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
}

/** Records a partner of the brand. */
export async function insertPartner(em: Em, p: { brandId: string; id: string; name: string; createdBy: string; at: Date }): Promise<void> {
  await changed(em, (db) => db.insertInto('partners').values({ brand_id: p.brandId, id: p.id, name: p.name, created_by: p.createdBy, created_at: p.at }));
}

/** The brand's partner `id`, or null. */
export async function findPartner(em: Em, brandId: string, id: string): Promise<PartnerRecord | null> {
  const row = await first(em, (db) => db.selectFrom('partners').select(['id', 'name', 'created_at']).where('brand_id', '=', brandId).where('id', '=', id));
  return row === undefined ? null : { id: row.id, name: row.name, createdAt: new Date(row.created_at) };
}

/** A grant to insert beside its API key. */
export interface NewPartnerGrant {
  readonly brandId: string;
  /** The API key's id. */
  readonly id: string;
  readonly partnerId: string;
  readonly productId: string | null;
  readonly mintBatchId: string | null;
  readonly quota: number;
  readonly createdBy: string;
  readonly at: Date;
}

/** Records a partner key's grant. */
export async function insertPartnerGrant(em: Em, g: NewPartnerGrant): Promise<void> {
  await changed(em, (db) =>
    db.insertInto('partner_grants').values({
      brand_id: g.brandId,
      id: g.id,
      partner_id: g.partnerId,
      product_id: g.productId,
      mint_batch_id: g.mintBatchId,
      quota: g.quota,
      allocated: 0,
      created_by: g.createdBy,
      created_at: g.at,
    }),
  );
}

/** A partner key's grant as an allocation reads it. */
export interface PartnerGrantRecord {
  readonly id: string;
  readonly partnerId: string;
  readonly productId: string | null;
  readonly mintBatchId: string | null;
  readonly quota: number;
  readonly allocated: number;
}

/** The brand's grant `id` (the key's id), locked until the transaction ends when `lock`; null when none. */
export async function findPartnerGrant(em: Em, brandId: string, id: string, lock = false): Promise<PartnerGrantRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('partner_grants')
      .select(['id', 'partner_id', 'product_id', 'mint_batch_id', 'quota', 'allocated'])
      .where('brand_id', '=', brandId)
      .where('id', '=', id)
      .$if(lock, (q) => q.forUpdate()),
  );
  return row === undefined
    ? null
    : {
        id: row.id,
        partnerId: row.partner_id,
        productId: row.product_id,
        mintBatchId: row.mint_batch_id,
        quota: row.quota,
        allocated: row.allocated,
      };
}

/** Adds `n` to a grant's allocated count unless that would pass its quota (the compare-and-set): false when it would. */
export async function addGrantAllocated(em: Em, brandId: string, id: string, n: number): Promise<boolean> {
  const updated = await rawChanged(
    em,
    sql`update partner_grants set allocated = allocated + ${n}::int
    where brand_id = ${brandId}::uuid and id = ${id}::uuid and allocated + ${n}::int <= quota`,
  );
  return updated === 1;
}

/** One partner of the brand with its keys (grants), for the brand's list. */
export interface PartnerListing extends PartnerRecord {
  readonly keys: readonly {
    readonly keyId: string;
    readonly name: string;
    readonly prefix: string;
    readonly productId: string | null;
    readonly mintBatchId: string | null;
    readonly quota: number;
    readonly allocated: number;
    readonly createdAt: Date;
    readonly revokedAt: Date | null;
  }[];
}

/** The brand's partners by name, each with its keys newest first. */
export async function listPartners(em: Em, brandId: string): Promise<PartnerListing[]> {
  const partners = await rows(em, (db) =>
    db.selectFrom('partners').select(['id', 'name', 'created_at']).where('brand_id', '=', brandId).orderBy('name').orderBy('id'),
  );
  const grants = await rows(em, (db) =>
    db
      .selectFrom('partner_grants as g')
      .innerJoin('api_keys as k', (j) => j.onRef('k.id', '=', 'g.id').onRef('k.brand_id', '=', 'g.brand_id'))
      .select(['g.id', 'g.partner_id', 'g.product_id', 'g.mint_batch_id', 'g.quota', 'g.allocated', 'g.created_at', 'k.name', 'k.lookup_id', 'k.revoked_at'])
      .where('g.brand_id', '=', brandId)
      .orderBy('g.created_at', 'desc')
      .orderBy('g.id'),
  );
  return partners.map((p) => ({
    id: p.id,
    name: p.name,
    createdAt: new Date(p.created_at),
    keys: grants
      .filter((g) => g.partner_id === p.id)
      .map((g) => ({
        keyId: g.id,
        name: g.name,
        prefix: `mk_${g.lookup_id}`,
        productId: g.product_id,
        mintBatchId: g.mint_batch_id,
        quota: g.quota,
        allocated: g.allocated,
        createdAt: new Date(g.created_at),
        revokedAt: g.revoked_at === null ? null : new Date(g.revoked_at),
      })),
  }));
}

/** An allocation request as stored. */
export interface AllocationRequestRecord {
  readonly id: string;
  readonly requestHash: string;
  readonly quantity: number;
}

/** The grant's request with idempotency key `key`, or null. */
export async function findAllocationRequestByKey(em: Em, brandId: string, grantId: string, key: string): Promise<AllocationRequestRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('allocation_requests')
      .select(['id', 'request_hash', 'quantity'])
      .where('brand_id', '=', brandId)
      .where('grant_id', '=', grantId)
      .where('idempotency_key', '=', key),
  );
  return row === undefined ? null : { id: row.id, requestHash: row.request_hash, quantity: row.quantity };
}

/** Records a request unless the grant used its key already: true when recorded. */
export async function insertAllocationRequest(
  em: Em,
  r: {
    brandId: string;
    id: string;
    grantId: string;
    partnerId: string;
    idempotencyKey: string;
    requestHash: string;
    quantity: number;
    at: Date;
  },
): Promise<boolean> {
  const n = await changed(em, (db) =>
    db
      .insertInto('allocation_requests')
      .values({
        brand_id: r.brandId,
        id: r.id,
        grant_id: r.grantId,
        partner_id: r.partnerId,
        idempotency_key: r.idempotencyKey,
        request_hash: r.requestHash,
        quantity: r.quantity,
        created_at: r.at,
      })
      .onConflict((oc) => oc.columns(['brand_id', 'grant_id', 'idempotency_key']).doNothing()),
  );
  return n === 1;
}

/** The brand's serial batches a grant may draw from, oldest first: its batch, or its product's batches that are not voided. */
export async function allocatableBatches(em: Em, brandId: string, restriction: { productId: string | null; mintBatchId: string | null }): Promise<string[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_batches')
      .select('id')
      .where('brand_id', '=', brandId)
      .where('identity_mode', '=', 'serial')
      .where('status', '<>', 'voided')
      .$if(restriction.mintBatchId !== null, (q) => q.where('id', '=', restriction.mintBatchId!))
      .$if(restriction.mintBatchId === null, (q) => q.where('product_id', '=', restriction.productId!))
      .orderBy('created_at')
      .orderBy('id'),
  );
  return found.map((r) => r.id);
}

/** Units of a batch read per round of {@link allocateUnits}. */
const allocationScan = 10_000;

/**
 * The batch's allocation floor (see {@link raiseAllocationFloor}): every unit at or below it is
 * allocated or no longer issued, so never allocatable again; null while the batch has no row.
 */
async function allocationFloor(em: Em, brandId: string, mintBatchId: string): Promise<number | null> {
  const [row] = await rawRows(
    em,
    sql<{ seq: number }>`select seq from allocation_floors where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid`,
  );
  return row?.seq ?? null;
}

/**
 * Raises the batch's allocation floor to `seq` inside the caller's transaction, never lowers it.
 * A floor another allocation is raising (its row locked) is left to it (`skip locked`): the floor
 * is where reads start, so one left low only costs the next allocation a longer read, and
 * allocations of one batch never wait on each other for it. `known` is whether the row existed
 * when the allocation read it; when it did not, it is inserted (a concurrent first insert of the
 * same batch waits for the other, once).
 */
async function raiseAllocationFloor(em: Em, brandId: string, mintBatchId: string, seq: number, known: boolean): Promise<void> {
  if (!known) {
    const inserted = await rawChanged(
      em,
      sql`insert into allocation_floors (brand_id, mint_batch_id, seq) values (${brandId}::uuid, ${mintBatchId}::uuid, ${seq}::int)
      on conflict (brand_id, mint_batch_id) do nothing`,
    );
    if (inserted === 1) return;
  }
  await rawChanged(
    em,
    sql`update allocation_floors f set seq = ${seq}::int
    from (select brand_id, mint_batch_id from allocation_floors
      where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and seq < ${seq}::int for update skip locked) as l
    where f.brand_id = l.brand_id and f.mint_batch_id = l.mint_batch_id`,
  );
}

/**
 * Allocates up to `limit` issued, never allocated units of one batch (lowest seq first) to a
 * partner, inside the caller's transaction, and returns how many. The batch's units are read in
 * seq order a round at a time from just above its allocation floor, those with an allocation or a
 * lifecycle row dropped (read by `seq = any(...)` on their primary keys, never an anti join: while
 * these tables have no statistics the planner scanned them once per unit, measured 24 s for 3,000
 * serials of a 10,000-unit batch), and the rest locked with `skip locked` (a unit another
 * transaction is moving or allocating is left to it) under `status = 'inactive'`. The insert's
 * primary key refuses a unit another allocation took meanwhile, and a last read, with the units
 * locked, drops any that left `issued` since: a compare-and-set per unit.
 *
 * The floor: an allocation row is never deleted, and a unit that left `issued` never comes back to
 * it (no serial move targets `issued`), so a unit that is allocated, commissioned (active) or has a
 * lifecycle row is closed for good. The allocation raises the floor over the unbroken run of closed
 * units it read from the floor up (its own allocations count: the floor is raised in the same
 * transaction), and stops at the first unit it did not see closed: one it skipped as locked (a
 * concurrent move or allocation may yet roll back), one it left for a later request, or a seq
 * missing from the read. Its cost is then flat in what was allocated before: measured by
 * `npm run bench:allocation`.
 */
export async function allocateUnits(
  em: Em,
  a: {
    brandId: string;
    mintBatchId: string;
    partnerId: string;
    grantId: string;
    requestId: string;
    at: Date;
    limit: number;
  },
): Promise<number> {
  const { brandId, mintBatchId } = a;
  const stored = await allocationFloor(em, brandId, mintBatchId);
  const floor = stored ?? 0;
  let allocated = 0;
  let after = floor;
  // The floor this allocation may raise to, and whether the run of closed units read so far is unbroken.
  let closedTo = floor;
  let unbroken = true;
  while (allocated < a.limit) {
    // Every unit of the round, active ones included: an active unit is closed, and the run must have no gap.
    const scanned = await rawRows(
      em,
      sql<{ seq: number; status: string }>`
      select seq, status from mint_units where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and seq > ${after}::int
      order by seq limit ${allocationScan}::int`,
    );
    if (scanned.length === 0) break;
    after = scanned[scanned.length - 1]!.seq;
    const inactive = scanned.filter((r) => r.status === 'inactive').map((r) => r.seq);
    const taken = new Set(
      inactive.length === 0
        ? []
        : (
            await rawRows(
              em,
              sql<{ seq: number }>`
      select seq from unit_allocations where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and seq = any(${inactive}::int[])
      union all
      select seq from unit_states where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and seq = any(${inactive}::int[])`,
            )
          ).map((r) => r.seq),
    );
    let free = inactive.filter((seq) => !taken.has(seq));
    const mine = new Set<number>();
    // A unit locked by another transaction is skipped (left to it); one another allocation committed
    // meanwhile is refused by the insert's primary key, and then the round's next free units are tried
    // (without that, a request racing another on the same batch could end the round having allocated
    // nothing, its next round starting after everything it read).
    let retry = true;
    while (retry && free.length > 0 && allocated < a.limit) {
      // Raw on purpose: `for update ... skip locked` feeding an insert in one statement.
      const tried = await rawRows(
        em,
        sql<{ seq: number; inserted: boolean }>`
      with locked as (
        select seq from mint_units
        where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and seq = any(${free}::int[]) and status = 'inactive'
        order by seq
        limit ${a.limit - allocated}::int
        for update skip locked
      ), inserted as (
        insert into unit_allocations (brand_id, mint_batch_id, seq, partner_id, grant_id, request_id, allocated_at)
        select ${brandId}::uuid, ${mintBatchId}::uuid, seq, ${a.partnerId}::uuid, ${a.grantId}::uuid, ${a.requestId}::uuid, ${a.at}::timestamptz from locked
        on conflict (brand_id, mint_batch_id, seq) do nothing
        returning seq
      )
      select l.seq, i.seq is not null as inserted from locked l left join inserted i on i.seq = l.seq`,
      );
      if (tried.length === 0) break;
      const triedSeqs = new Set(tried.map((r) => r.seq));
      free = free.filter((seq) => !triedSeqs.has(seq));
      const inserted = tried.filter((r) => r.inserted).map((r) => r.seq);
      for (const r of tried) if (!r.inserted) taken.add(r.seq);
      retry = inserted.length < tried.length;
      // A unit a move committed between the reads above and its lock: its lifecycle row is visible now.
      const moved =
        inserted.length === 0
          ? []
          : (
              await rawRows(
                em,
                sql<{ seq: number }>`
      select seq from unit_states where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and seq = any(${inserted}::int[])`,
              )
            ).map((r) => r.seq);
      if (moved.length > 0) {
        await rawChanged(
          em,
          sql`delete from unit_allocations
        where brand_id = ${brandId}::uuid and mint_batch_id = ${mintBatchId}::uuid and request_id = ${a.requestId}::uuid and seq = any(${moved}::int[])`,
        );
      }
      for (const seq of inserted) mine.add(seq);
      allocated += inserted.length - moved.length;
    }
    // The lowest free units may be locked by another request and skipped: the next round goes on after what this one read.
    if (unbroken) {
      // Closed for good: active, allocated or with a lifecycle row when read or tried, or taken by this allocation (a moved one has a lifecycle row).
      for (const r of scanned) {
        if (r.seq !== closedTo + 1 || !(r.status !== 'inactive' || taken.has(r.seq) || mine.has(r.seq))) {
          unbroken = false;
          break;
        }
        closedTo = r.seq;
      }
    }
  }
  if (closedTo > floor) await raiseAllocationFloor(em, brandId, mintBatchId, closedTo, stored !== null);
  return allocated;
}

/** A unit of an allocation request, with what its events and its caller need. */
export interface AllocatedUnit {
  readonly mintBatchId: string;
  readonly seq: number;
  readonly serial: string;
  /** The unit's EPC: its resolver URL (a GS1 Digital Link URI for a unit with a GTIN). */
  readonly epc: string;
}

/**
 * The units allocated by request `requestId`, by batch (oldest first) and seq. The request's rows
 * first, then each batch's units by `seq = any(...)`, never a join: while `unit_allocations` has no
 * statistics a join probed it with a sequential scan per unit (measured: 7 s for 6,000 serials of a
 * 10,000-unit batch, against well under a second this way).
 */
export async function readAllocatedUnits(em: Em, brandId: string, requestId: string): Promise<AllocatedUnit[]> {
  const allocated = await rawRows(
    em,
    sql<{ mint_batch_id: string; seq: number }>`
    select mint_batch_id, seq from unit_allocations where brand_id = ${brandId}::uuid and request_id = ${requestId}::uuid`,
  );
  const byBatch = new Map<string, number[]>();
  for (const a of allocated) {
    const list = byBatch.get(a.mint_batch_id);
    if (list === undefined) byBatch.set(a.mint_batch_id, [a.seq]);
    else list.push(a.seq);
  }
  if (byBatch.size === 0) return [];
  const batches = await rows(em, (db) =>
    db
      .selectFrom('mint_batches')
      .select(['id', 'resolver_base_url', 'gtin', 'created_at'])
      .where('brand_id', '=', brandId)
      .where('id', 'in', [...byBatch.keys()])
      .orderBy('created_at')
      .orderBy('id'),
  );
  const out: AllocatedUnit[] = [];
  for (const b of batches) {
    const units = await rawRows(
      em,
      sql<{ seq: number; serial: string }>`
      select seq, serial from mint_units where brand_id = ${brandId}::uuid and mint_batch_id = ${b.id}::uuid and seq = any(${byBatch.get(b.id)!}::int[])
      order by seq`,
    );
    for (const u of units) out.push({ mintBatchId: b.id, seq: u.seq, serial: u.serial, epc: unitResolverUrl(b.resolver_base_url, b.gtin, u.serial) });
  }
  return out;
}

/** The partner each of `units` is allocated to (key `batch/seq`); units never allocated are absent. */
export async function readUnitPartners(
  em: Em,
  brandId: string,
  units: readonly { readonly mintBatchId: string; readonly seq: number }[],
): Promise<Map<string, string>> {
  const byBatch = new Map<string, number[]>();
  for (const u of units) {
    const list = byBatch.get(u.mintBatchId);
    if (list === undefined) byBatch.set(u.mintBatchId, [u.seq]);
    else list.push(u.seq);
  }
  const out = new Map<string, string>();
  for (const [batchId, seqs] of byBatch) {
    const found = await rawRows(
      em,
      sql<{ seq: number; partner_id: string }>`
      select seq, partner_id from unit_allocations where brand_id = ${brandId}::uuid and mint_batch_id = ${batchId}::uuid and seq = any(${seqs}::int[])`,
    );
    for (const r of found) out.set(`${batchId}/${r.seq}`, r.partner_id);
  }
  return out;
}

/** Allocated units of a batch per partner, lifecycle state and decommissioning reason (reconciliation). */
export async function countAllocatedStates(
  em: Em,
  brandId: string,
  batchId: string,
): Promise<{ partnerId: string; partnerName: string; state: string; reason: string | null; count: number }[]> {
  // Hash joins over the batch's rows (see withPlanner).
  const found = await withPlanner(em, 'enable_nestloop', (tx) =>
    rawRows(
      tx,
      sql<{ partner_id: string; name: string | null; state: string; reason: string | null; n: string }>`
    select a.partner_id, p.name, coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) as state, s.reason, count(*) as n
    from unit_allocations a
    join mint_units u on u.brand_id = a.brand_id and u.mint_batch_id = a.mint_batch_id and u.seq = a.seq
    left join partners p on p.brand_id = a.brand_id and p.id = a.partner_id
    left join unit_states s on s.brand_id = a.brand_id and s.mint_batch_id = a.mint_batch_id and s.seq = a.seq
    where a.brand_id = ${brandId}::uuid and a.mint_batch_id = ${batchId}::uuid
    group by 1, 2, 3, 4 order by 2, 1, 3, 4`,
    ),
  );
  return found.map((r) => ({ partnerId: r.partner_id, partnerName: r.name ?? '', state: r.state, reason: r.reason, count: Number(r.n) }));
}

/**
 * Rows of a batch that name a serial its units do not hold (a serial listed nowhere): lifecycle
 * rows and allocations without a unit, and units past the batch's minted quantity.
 */
export async function countUnlistedSerials(
  em: Em,
  brandId: string,
  batchId: string,
): Promise<{ orphanStates: number; orphanAllocations: number; units: number }> {
  // Hash anti joins over the batch's rows (see withPlanner).
  const [row] = await withPlanner(em, 'enable_nestloop', (tx) =>
    rawRows(
      tx,
      sql<{ orphan_states: string; orphan_allocations: string; units: string }>`
    select
      (select count(*) from unit_states s where s.brand_id = ${brandId}::uuid and s.mint_batch_id = ${batchId}::uuid
        and not exists (select 1 from mint_units u where u.brand_id = s.brand_id and u.mint_batch_id = s.mint_batch_id and u.seq = s.seq)) as orphan_states,
      (select count(*) from unit_allocations a where a.brand_id = ${brandId}::uuid and a.mint_batch_id = ${batchId}::uuid
        and not exists (select 1 from mint_units u where u.brand_id = a.brand_id and u.mint_batch_id = a.mint_batch_id and u.seq = a.seq)) as orphan_allocations,
      (select count(*) from mint_units u where u.brand_id = ${brandId}::uuid and u.mint_batch_id = ${batchId}::uuid) as units`,
    ),
  );
  return { orphanStates: Number(row!.orphan_states), orphanAllocations: Number(row!.orphan_allocations), units: Number(row!.units) };
}

/** Where a return of a partner's unused serials goes on: after this unit of its allocation (batch and seq order). */
export interface AllocationCursor {
  readonly mintBatchId: string;
  readonly seq: number;
}

/** Units allocated to the partner that are still issued (no lifecycle row, not in circulation), outside voided batches. */
const unusedAllocated = (brandId: string, partnerId: string) => sql`
  from unit_allocations a
  join mint_units u on u.brand_id = a.brand_id and u.mint_batch_id = a.mint_batch_id and u.seq = a.seq
  join mint_batches b on b.brand_id = a.brand_id and b.id = a.mint_batch_id
  where a.brand_id = ${brandId}::uuid and a.partner_id = ${partnerId}::uuid and u.status <> 'active' and b.status <> 'voided'
    and not exists (select 1 from unit_states s where s.brand_id = a.brand_id and s.mint_batch_id = a.mint_batch_id and s.seq = a.seq)`;

/** How many units allocated to the partner are still issued (unused: returnable). */
export async function countUnusedAllocated(em: Em, brandId: string, partnerId: string): Promise<number> {
  const [row] = await rawRows(em, sql<{ n: string }>`select count(*) as n ${unusedAllocated(brandId, partnerId)}`);
  return Number(row?.n ?? 0);
}

/**
 * The next `limit` units allocated to the partner after `after` (null: from the first) that are
 * still issued, in batch and seq order, by the (brand_id, partner_id, mint_batch_id, seq) index;
 * `next` is where the following chunk starts, null when this was the last. Not locked: the move's
 * statement locks them and checks their state again.
 */
export async function unusedAllocatedUnits(
  em: Em,
  brandId: string,
  partnerId: string,
  after: AllocationCursor | null,
  limit: number,
): Promise<{ units: { mintBatchId: string; seq: number }[]; next: AllocationCursor | null }> {
  const found = await rawRows(
    em,
    sql<{ mint_batch_id: string; seq: number }>`select a.mint_batch_id, a.seq ${unusedAllocated(brandId, partnerId)}
    ${after === null ? sql`` : sql`and (a.mint_batch_id, a.seq) > (${after.mintBatchId}::uuid, ${after.seq}::int)`}
    order by a.mint_batch_id, a.seq limit ${limit}::int`,
  );
  const units = found.map((r) => ({ mintBatchId: r.mint_batch_id, seq: r.seq }));
  const last = units.at(-1);
  return { units, next: units.length < limit || last === undefined ? null : last };
}
