import { containerUri, unitResolverUrl, type ContainerState, type DecommissionReason } from '@mint/domain';
import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { changed, first, rawChanged, rawRows, rows } from './kysely.ts';
import { unitKeysOfSerialsSql } from './serial-keys.ts';

/**
 * Aggregation storage: containers by SSCC, the container each unit and container is in, and the
 * requests that minted, packed and unpacked them. Packing is a compare-and-set: a unit is packed by
 * inserting its `unit_containers` row (its key is the unit, so a unit packed meanwhile is not
 * inserted twice), a container by setting its `parent_id` where it is still null; the caller
 * compares the count written with the count asked and rolls back on a difference.
 */

/** What the brand has configured for containers. */
export interface BrandContainerConfig {
  readonly companyPrefix: string | null;
  readonly resolverBaseUrl: string;
  readonly slug: string;
  /** The brand's max_depth; null until it set one (the default applies). */
  readonly maxDepth: number | null;
}

/** The brand's company prefix, resolver base and container settings; null for an unknown brand. */
export async function readBrandContainerConfig(em: Em, brandId: string): Promise<BrandContainerConfig | null> {
  const brand = await first(em, (db) => db.selectFrom('brands').select(['company_prefix', 'resolver_base_url', 'slug']).where('id', '=', brandId));
  if (brand === undefined) return null;
  const settings = await first(em, (db) => db.selectFrom('container_settings').select(['max_depth']).where('brand_id', '=', brandId));
  return { companyPrefix: brand.company_prefix, resolverBaseUrl: brand.resolver_base_url, slug: brand.slug, maxDepth: settings?.max_depth ?? null };
}

/** Sets the brand's company prefix (the unique constraint refuses one another brand holds: SQLSTATE 23505). */
export async function setBrandCompanyPrefix(em: Em, brandId: string, prefix: string | null): Promise<void> {
  await changed(em, (db) => db.updateTable('brands').set({ company_prefix: prefix }).where('id', '=', brandId));
}

/** Sets the brand's max_depth, making its settings row when it has none. */
export async function setContainerMaxDepth(em: Em, brandId: string, maxDepth: number, at: Date): Promise<void> {
  await changed(em, (db) =>
    db
      .insertInto('container_settings')
      .values({ brand_id: brandId, max_depth: maxDepth, next_serial_ref: 0, updated_at: at })
      .onConflict((oc) => oc.column('brand_id').doUpdateSet({ max_depth: maxDepth, updated_at: at })),
  );
}

/**
 * Takes `count` serial references from the brand's counter (made at 0 with `defaultDepth` on first
 * use) and returns the first: the counter only grows, and the row lock it takes serialises two
 * mints of one brand, so no reference is ever issued twice.
 */
export async function allocateSerialRefs(em: Em, brandId: string, count: number, defaultDepth: number, at: Date): Promise<number> {
  const [row] = await rawRows(
    em,
    sql<{ next: string }>`
    insert into container_settings (brand_id, max_depth, next_serial_ref, updated_at) values (${brandId}::uuid, ${defaultDepth}::int, ${count}::bigint, ${at}::timestamptz)
    on conflict (brand_id) do update set next_serial_ref = container_settings.next_serial_ref + ${count}::bigint, updated_at = excluded.updated_at
    returning next_serial_ref::text as next`,
  );
  return Number(row!.next) - count;
}

/** A MintContainers request as stored. */
export interface ContainerMintRecord {
  readonly id: string;
  readonly requestHash: string;
  readonly level: string;
  readonly count: number;
}

/** Records a mint unless its key was used: true when recorded. */
export async function insertContainerMint(
  em: Em,
  m: {
    brandId: string;
    id: string;
    idempotencyKey: string;
    requestHash: string;
    level: string;
    extensionDigit: number;
    count: number;
    companyPrefix: string;
    firstSerialRef: number;
    actor: string | null;
    at: Date;
  },
): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .insertInto('container_mints')
        .values({
          brand_id: m.brandId,
          id: m.id,
          idempotency_key: m.idempotencyKey,
          request_hash: m.requestHash,
          level: m.level,
          extension_digit: m.extensionDigit,
          count: m.count,
          company_prefix: m.companyPrefix,
          first_serial_ref: m.firstSerialRef,
          actor: m.actor,
          created_at: m.at,
        })
        .onConflict((oc) => oc.columns(['brand_id', 'idempotency_key']).doNothing()),
    )) === 1
  );
}

/** The brand's mint with key `key`, or null. */
export async function findContainerMintByKey(em: Em, brandId: string, key: string): Promise<ContainerMintRecord | null> {
  const row = await first(em, (db) =>
    db.selectFrom('container_mints').select(['id', 'request_hash', 'level', 'count']).where('brand_id', '=', brandId).where('idempotency_key', '=', key),
  );
  return row === undefined ? null : { id: row.id, requestHash: row.request_hash, level: row.level, count: row.count };
}

/** Inserts minted containers (commissioned, in no container) in one `unnest` statement. */
export async function insertContainers(
  em: Em,
  c: { brandId: string; mintId: string; level: string; resolverBaseUrl: string; ids: readonly string[]; ssccs: readonly string[]; at: Date },
): Promise<void> {
  await rawChanged(
    em,
    sql`insert into containers (brand_id, id, sscc, level, resolver_base_url, state, reason, parent_id, mint_id, created_at, changed_at)
    select ${c.brandId}::uuid, t.id, t.sscc, ${c.level}::text, ${c.resolverBaseUrl}::text, 'commissioned', null, null, ${c.mintId}::uuid, ${c.at}::timestamptz, ${c.at}::timestamptz
    from unnest(${[...c.ids]}::uuid[], ${[...c.ssccs]}::text[]) as t(id, sscc)`,
  );
}

/**
 * The partner of each of the brand's containers `ids` that a partner minted (under one of its API
 * keys); containers the brand minted are absent from the map.
 */
export async function containerPartners(em: Em, brandId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const found = await rawRows(
    em,
    sql<{ id: string; partner_id: string }>`
    select c.id, k.partner_id from containers c
    join container_mints m on m.brand_id = c.brand_id and m.id = c.mint_id
    join api_keys k on k.brand_id = c.brand_id and k.id::text = m.actor
    where c.brand_id = ${brandId}::uuid and c.id = any(${[...ids]}::uuid[]) and k.partner_id is not null`,
  );
  return new Map(found.map((r) => [r.id, r.partner_id]));
}

/** The SSCCs a mint issued, in order. */
export async function listSsccsOfMint(em: Em, brandId: string, mintId: string): Promise<string[]> {
  const found = await rows(em, (db) =>
    db.selectFrom('containers').select('sscc').where('brand_id', '=', brandId).where('mint_id', '=', mintId).orderBy('sscc'),
  );
  return found.map((r) => r.sscc);
}

/** A container as the rules see it. */
export interface ContainerRecord {
  readonly id: string;
  readonly sscc: string;
  readonly level: string;
  /** Its URI in events: `{resolver base at mint}/00/{sscc}`. */
  readonly epc: string;
  readonly state: ContainerState;
  readonly reason: DecommissionReason | null;
  readonly parentId: string | null;
  readonly createdAt: Date;
  readonly changedAt: Date;
}

type ContainerDbRow = {
  id: string;
  sscc: string;
  level: string;
  resolver_base_url: string;
  state: string;
  reason: string | null;
  parent_id: string | null;
  created_at: string | Date;
  changed_at: string | Date;
};

const toContainer = (r: ContainerDbRow): ContainerRecord => ({
  id: r.id,
  sscc: r.sscc,
  level: r.level,
  epc: containerUri(r.resolver_base_url, r.sscc),
  state: r.state as ContainerState,
  reason: r.reason as DecommissionReason | null,
  parentId: r.parent_id,
  createdAt: new Date(r.created_at),
  changedAt: new Date(r.changed_at),
});
const containerColumns = ['id', 'sscc', 'level', 'resolver_base_url', 'state', 'reason', 'parent_id', 'created_at', 'changed_at'] as const;

/** The brand's containers with these SSCCs, locked until the transaction ends when `lock` (in id order: two packs never deadlock on them). */
export async function findContainersBySscc(em: Em, brandId: string, ssccs: readonly string[], lock = false): Promise<ContainerRecord[]> {
  if (ssccs.length === 0) return [];
  const found = await rows(em, (db) =>
    db
      .selectFrom('containers')
      .select(containerColumns)
      .where('brand_id', '=', brandId)
      .where((eb) => eb('sscc', '=', eb.fn.any(eb.cast<string[]>(eb.val([...ssccs]), sql`text[]`))))
      .orderBy('id')
      .$if(lock, (q) => q.forUpdate()),
  );
  return found.map((r) => toContainer(r as ContainerDbRow));
}

/** The brand's container with this SSCC (locked when `lock`), or null. */
export async function findContainerBySscc(em: Em, brandId: string, sscc: string, lock = false): Promise<ContainerRecord | null> {
  return (await findContainersBySscc(em, brandId, [sscc], lock))[0] ?? null;
}

/** The SSCC of the brand's container `id`, or null. */
export async function ssccOfContainer(em: Em, brandId: string, id: string): Promise<string | null> {
  const row = await first(em, (db) => db.selectFrom('containers').select('sscc').where('brand_id', '=', brandId).where('id', '=', id));
  return row?.sscc ?? null;
}

/** Ids of the containers `id` is inside, nearest first. */
export async function ancestorsOf(em: Em, brandId: string, id: string): Promise<string[]> {
  const found = await rawRows(
    em,
    sql<{ id: string; depth: number }>`
    with recursive up(id, depth) as (
      select parent_id, 1 from containers where brand_id = ${brandId}::uuid and id = ${id}::uuid and parent_id is not null
      union all
      select c.parent_id, up.depth + 1 from containers c join up on c.brand_id = ${brandId}::uuid and c.id = up.id
      where c.parent_id is not null and up.depth < 64
    )
    select id, depth from up order by depth`,
  );
  return found.map((r) => r.id);
}

/** Container levels inside each of `ids`, itself included (1 for a container with no container inside). */
export async function heightsOf(em: Em, brandId: string, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(ids.map((id) => [id, 1]));
  if (ids.length === 0) return out;
  const found = await rawRows(
    em,
    sql<{ root: string; height: number }>`
    with recursive down(root, id, height) as (
      select id, id, 1 from containers where brand_id = ${brandId}::uuid and id = any(${[...ids]}::uuid[])
      union all
      select down.root, c.id, down.height + 1 from containers c join down on c.brand_id = ${brandId}::uuid and c.parent_id = down.id
      where down.height < 64
    )
    select root, max(height)::int as height from down group by root`,
  );
  for (const r of found) out.set(r.root, r.height);
  return out;
}

/** The container tree under `rootId`, the root first, then by depth. */
export async function containerTree(em: Em, brandId: string, rootId: string): Promise<ContainerRecord[]> {
  const found = await rawRows(
    em,
    sql<ContainerDbRow & { depth: number }>`
    with recursive down(id, depth) as (
      select ${rootId}::uuid, 0
      union all
      select c.id, down.depth + 1 from containers c join down on c.brand_id = ${brandId}::uuid and c.parent_id = down.id where down.depth < 64
    )
    select c.id, c.sscc, c.level, c.resolver_base_url, c.state, c.reason, c.parent_id, c.created_at, c.changed_at, down.depth
    from down join containers c on c.brand_id = ${brandId}::uuid and c.id = down.id
    order by down.depth, c.sscc`,
  );
  return found.map(toContainer);
}

/** A unit packed in a container. */
export interface PackedUnit {
  readonly mintBatchId: string;
  readonly seq: number;
  readonly serial: string;
  readonly epc: string;
  readonly containerId: string;
}

type PackedUnitRow = { mint_batch_id: string; seq: number; serial: string; resolver_base_url: string; gtin: string | null; container_id: string };
const toPackedUnit = (r: PackedUnitRow): PackedUnit => ({
  mintBatchId: r.mint_batch_id,
  seq: r.seq,
  serial: r.serial,
  epc: unitResolverUrl(r.resolver_base_url, r.gtin, r.serial),
  containerId: r.container_id,
});

/** Units packed directly in each of the brand's containers `ids` (an index-only count; a container with none is absent). */
export async function countUnitsInContainers(em: Em, brandId: string, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const found = await rawRows(
    em,
    sql<{ container_id: string; n: string }>`
    select container_id, count(*) as n from unit_containers where brand_id = ${brandId}::uuid and container_id = any(${[...ids]}::uuid[]) group by container_id`,
  );
  return new Map(found.map((r) => [r.container_id, Number(r.n)]));
}

/**
 * Share-locks the brand's containers `ids` until the transaction ends, in id order (as packs lock
 * them, so the two never deadlock): a pack or unpack of them waits, and waits for nothing else.
 */
export async function lockContainersForShare(em: Em, brandId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await rawRows(em, sql`select id from containers where brand_id = ${brandId}::uuid and id = any(${[...ids]}::uuid[]) order by id for share`);
}

/** A unit packed in a container, by its key. */
export interface PackedKey {
  readonly mintBatchId: string;
  readonly seq: number;
}

/**
 * The keys of the units packed directly in the brand's containers `ids`, in batch and seq order,
 * or with `page`, up to `page.limit` of them after `page.after` in the one container of `ids` (the
 * index's order: a container of any size is read a page at a time). Read from the packing index
 * alone: no unit row is probed (while mint_units' statistics are stale after a mint, the planner
 * probes a unit by its batch on the list index and filters the batch's every unit by seq, measured
 * 60 s for 10,000 units of a 17,000-unit batch).
 */
export async function unitKeysInContainers(
  em: Em,
  brandId: string,
  ids: readonly string[],
  page?: {
    readonly after: PackedKey | null;
    readonly limit: number;
  },
): Promise<PackedKey[]> {
  if (ids.length === 0) return [];
  const found = await rawRows(
    em,
    sql<{ mint_batch_id: string; seq: number }>`
    select mint_batch_id, seq from unit_containers c
    where c.brand_id = ${brandId}::uuid and c.container_id = any(${[...ids]}::uuid[])
      ${page?.after == null ? sql`` : sql`and (c.mint_batch_id, c.seq) > (${page.after.mintBatchId}::uuid, ${page.after.seq}::int)`}
    order by c.mint_batch_id, c.seq ${page === undefined ? sql`` : sql`limit ${page.limit}::int`}`,
  );
  return found.map((r) => ({ mintBatchId: r.mint_batch_id, seq: r.seq }));
}

/** The serials of the brand's units by key, in the keys' order (a unit the brand has no row for is absent). */
export async function serialsOfUnits(em: Em, brandId: string, keys: readonly PackedKey[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const found = await rawRows(
    em,
    sql<{ serial: string }>`
    select m.serial from unnest(${keys.map((k) => k.mintBatchId)}::uuid[], ${keys.map((k) => k.seq)}::int[]) with ordinality as t(b, q, n)
    join lateral (select serial from mint_units m where m.brand_id = ${brandId}::uuid and m.mint_batch_id = t.b and m.seq = t.q offset 0) m on true
    order by t.n`,
  );
  return found.map((r) => r.serial);
}

/** The container each of these units (by batch and seq) is packed in, where it is packed. */
export async function containersOfUnits(
  em: Em,
  brandId: string,
  units: readonly { readonly mintBatchId: string; readonly seq: number }[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (units.length === 0) return out;
  // Each unit looked up on the key (a lateral subquery kept apart by `offset 0`), never a hash of the whole table.
  const found = await rawRows(
    em,
    sql<{ mint_batch_id: string; seq: number; container_id: string }>`
    select p.mint_batch_id, p.seq, p.container_id
    from unnest(${units.map((u) => u.mintBatchId)}::uuid[], ${units.map((u) => u.seq)}::int[]) as t(b, q)
    join lateral (select * from unit_containers c where c.brand_id = ${brandId}::uuid and c.mint_batch_id = t.b and c.seq = t.q offset 0) p on true`,
  );
  for (const r of found) out.set(`${r.mint_batch_id}/${r.seq}`, r.container_id);
  return out;
}

/**
 * Packs units into a container, each only where it is in none (the compare-and-set): returns how
 * many were packed; fewer than given means another pack took some first.
 */
export async function packUnits(
  em: Em,
  brandId: string,
  containerId: string,
  units: readonly { readonly mintBatchId: string; readonly seq: number }[],
  at: Date,
): Promise<number> {
  if (units.length === 0) return 0;
  return rawChanged(
    em,
    sql`insert into unit_containers (brand_id, mint_batch_id, seq, container_id, packed_at)
    select ${brandId}::uuid, t.b, t.q, ${containerId}::uuid, ${at}::timestamptz
    from unnest(${units.map((u) => u.mintBatchId)}::uuid[], ${units.map((u) => u.seq)}::int[]) as t(b, q)
    on conflict (brand_id, mint_batch_id, seq) do nothing`,
  );
}

/** Packs containers into `parentId`, each only where it is in none (the compare-and-set): returns how many moved. */
export async function packContainers(em: Em, brandId: string, parentId: string, ids: readonly string[], at: Date): Promise<number> {
  if (ids.length === 0) return 0;
  return changed(em, (db) =>
    db
      .updateTable('containers')
      .set({ parent_id: parentId, changed_at: at })
      .where('brand_id', '=', brandId)
      .where('parent_id', 'is', null)
      .where((eb) => eb('id', '=', eb.fn.any(eb.cast<string[]>(eb.val([...ids]), sql`uuid[]`)))),
  );
}

/**
 * Packs units into containers, many containers at once (a captured document's packing events),
 * each unit only where it is in none (the compare-and-set): returns how many were packed; fewer
 * than given means another pack took some first.
 */
export async function packUnitsInto(
  em: Em,
  brandId: string,
  rows: readonly { readonly containerId: string; readonly mintBatchId: string; readonly seq: number }[],
  at: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  return rawChanged(
    em,
    sql`insert into unit_containers (brand_id, mint_batch_id, seq, container_id, packed_at)
    select ${brandId}::uuid, t.b, t.q, t.c, ${at}::timestamptz
    from unnest(${rows.map((r) => r.mintBatchId)}::uuid[], ${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.containerId)}::uuid[]) as t(b, q, c)
    on conflict (brand_id, mint_batch_id, seq) do nothing`,
  );
}

/** Packs containers into parents, many parents at once, each only where it is in none (the compare-and-set): returns how many moved. */
export async function packContainersInto(
  em: Em,
  brandId: string,
  rows: readonly { readonly parentId: string; readonly id: string }[],
  at: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  return rawChanged(
    em,
    sql`update containers c set parent_id = t.p, changed_at = ${at}::timestamptz
    from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.parentId)}::uuid[]) as t(id, p)
    where c.brand_id = ${brandId}::uuid and c.id = t.id and c.parent_id is null`,
  );
}

/**
 * Takes units out of a container: those listed by serial, or every one when `serials` is null.
 * Returns the units taken out (a listed serial not in the container is simply absent).
 */
export async function unpackUnits(em: Em, brandId: string, containerId: string, serials: readonly string[] | null): Promise<PackedUnit[]> {
  // Each unit's row read on its own index entry (lateral subqueries kept apart by `offset 0`): a
  // join lets the planner hash the whole mint_units table for 10,000 units of a large brand.
  const one = (on: ReturnType<typeof sql>) =>
    sql`join lateral (select m.serial, m.mint_batch_id, m.seq from mint_units m where m.brand_id = ${brandId}::uuid and ${on} offset 0) u on true`;
  const found = await rawRows(
    em,
    sql<PackedUnitRow>`
    with gone as (
      delete from unit_containers p
      where p.brand_id = ${brandId}::uuid and p.container_id = ${containerId}::uuid
        ${
          serials === null
            ? sql``
            : sql`and (p.mint_batch_id, p.seq) in (
          select u.mint_batch_id, u.seq from ${await unitKeysOfSerialsSql(em, brandId, serials)} as s ${one(sql`m.mint_batch_id = s.mint_batch_id and m.seq = s.seq and m.serial = s.serial`)})`
        }
      returning p.mint_batch_id, p.seq, p.container_id
    )
    select g.mint_batch_id, g.seq, u.serial, b.resolver_base_url, b.gtin, g.container_id
    from gone g ${one(sql`m.mint_batch_id = g.mint_batch_id and m.seq = g.seq`)}
    join mint_batches b on b.brand_id = ${brandId}::uuid and b.id = g.mint_batch_id
    order by g.mint_batch_id, g.seq`,
  );
  return found.map(toPackedUnit);
}

/** Takes containers out of `parentId`: those with these SSCCs, or every one when null. Returns those taken out. */
export async function unpackContainers(em: Em, brandId: string, parentId: string, ssccs: readonly string[] | null, at: Date): Promise<ContainerRecord[]> {
  const found = await rawRows(
    em,
    sql<ContainerDbRow>`
    update containers set parent_id = null, changed_at = ${at}::timestamptz
    where brand_id = ${brandId}::uuid and parent_id = ${parentId}::uuid
      ${ssccs === null ? sql`` : sql`and sscc = any(${[...ssccs]}::text[])`}
    returning id, sscc, level, resolver_base_url, state, reason, parent_id, created_at, changed_at`,
  );
  return found.map(toContainer).sort((a, b) => a.sscc.localeCompare(b.sscc));
}

/**
 * Moves containers among `ids` still in state `from` to `to` with `reason` (the compare-and-set);
 * returns those moved.
 */
export async function moveContainerStates(
  em: Em,
  brandId: string,
  ids: readonly string[],
  from: ContainerState,
  to: ContainerState,
  reason: string | null,
  at: Date,
): Promise<ContainerRecord[]> {
  if (ids.length === 0) return [];
  const found = await rawRows(
    em,
    sql<ContainerDbRow>`
    update containers set state = ${to}::text, reason = ${reason}::text, changed_at = ${at}::timestamptz
    where brand_id = ${brandId}::uuid and id = any(${[...ids]}::uuid[]) and state = ${from}::text
    returning id, sscc, level, resolver_base_url, state, reason, parent_id, created_at, changed_at`,
  );
  return found.map(toContainer).sort((a, b) => a.sscc.localeCompare(b.sscc));
}

/** One page of a container's contents: its containers by SSCC, then its units by batch and seq. */
export interface ContentsPage {
  readonly containers: readonly ContainerRecord[];
  readonly units: readonly PackedUnit[];
}

/** Position in a container's contents: after a container's SSCC, or after a unit. */
export type ContentsCursor = { readonly sscc: string } | { readonly mintBatchId: string; readonly seq: number };

/** Up to `limit` + 1 items of a container's contents after `after` (the caller trims the extra and makes the cursor). */
export async function containerContents(em: Em, brandId: string, containerId: string, after: ContentsCursor | null, limit: number): Promise<ContentsPage> {
  let containers: ContainerRecord[] = [];
  if (after === null || 'sscc' in after) {
    const found = await rows(em, (db) =>
      db
        .selectFrom('containers')
        .select(containerColumns)
        .where('brand_id', '=', brandId)
        .where('parent_id', '=', containerId)
        .$if(after !== null, (q) => q.where('sscc', '>', (after as { sscc: string }).sscc))
        .orderBy('sscc')
        .limit(limit + 1),
    );
    containers = found.map((r) => toContainer(r as ContainerDbRow));
  }
  if (containers.length > limit) return { containers, units: [] };
  const unitAfter = after !== null && 'seq' in after ? after : null;
  const found = await rawRows(
    em,
    sql<PackedUnitRow>`
    select p.mint_batch_id, p.seq, u.serial, b.resolver_base_url, b.gtin, p.container_id
    from unit_containers p
    join mint_units u on u.brand_id = p.brand_id and u.mint_batch_id = p.mint_batch_id and u.seq = p.seq
    join mint_batches b on b.brand_id = p.brand_id and b.id = p.mint_batch_id
    where p.brand_id = ${brandId}::uuid and p.container_id = ${containerId}::uuid
      ${unitAfter === null ? sql`` : sql`and (p.mint_batch_id, p.seq) > (${unitAfter.mintBatchId}::uuid, ${unitAfter.seq}::int)`}
    order by p.mint_batch_id, p.seq
    limit ${limit + 1 - containers.length}::int`,
  );
  return { containers, units: found.map(toPackedUnit) };
}

/** Counts of what a container holds directly. */
export async function countContents(em: Em, brandId: string, containerId: string): Promise<{ containers: number; units: number }> {
  const c = await first(em, (db) =>
    db
      .selectFrom('containers')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('brand_id', '=', brandId)
      .where('parent_id', '=', containerId),
  );
  const u = await first(em, (db) =>
    db
      .selectFrom('unit_containers')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('brand_id', '=', brandId)
      .where('container_id', '=', containerId),
  );
  return { containers: Number(c?.n ?? 0), units: Number(u?.n ?? 0) };
}

/** A pack or unpack request as stored. */
export interface ContainerOpRecord {
  readonly id: string;
  readonly requestHash: string;
  readonly op: string;
  readonly units: number;
  readonly containers: number;
}

/** A pack or unpack to record (`container_ops`). */
export interface ContainerOpInsert {
  brandId: string;
  id: string;
  idempotencyKey: string;
  requestHash: string;
  op: 'pack' | 'unpack';
  containerId: string;
  units: number;
  containers: number;
  actor: string | null;
  at: Date;
}

/** Records a pack or unpack unless its key was used: true when recorded. */
export async function insertContainerOp(em: Em, o: ContainerOpInsert): Promise<boolean> {
  return (await insertContainerOps(em, [o])) === 1;
}

/** Records packs or unpacks, each unless its key was used: returns how many were recorded (fewer than given: a key was used). */
export async function insertContainerOps(em: Em, ops: readonly ContainerOpInsert[]): Promise<number> {
  if (ops.length === 0) return 0;
  return changed(em, (db) =>
    db
      .insertInto('container_ops')
      .values(
        ops.map((o) => ({
          brand_id: o.brandId,
          id: o.id,
          idempotency_key: o.idempotencyKey,
          request_hash: o.requestHash,
          op: o.op,
          container_id: o.containerId,
          units: o.units,
          containers: o.containers,
          actor: o.actor,
          created_at: o.at,
        })),
      )
      .onConflict((oc) => oc.columns(['brand_id', 'idempotency_key']).doNothing()),
  );
}

/** The brand's pack or unpack with key `key`, or null. */
export async function findContainerOpByKey(em: Em, brandId: string, key: string): Promise<ContainerOpRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('container_ops')
      .select(['id', 'request_hash', 'op', 'units', 'containers'])
      .where('brand_id', '=', brandId)
      .where('idempotency_key', '=', key),
  );
  return row === undefined ? null : { id: row.id, requestHash: row.request_hash, op: row.op, units: row.units, containers: row.containers };
}

/** The brand that holds a slug, with its id (the resolver's /00/ lookup). */
export async function findBrandIdBySlug(em: Em, slug: string): Promise<{ id: string; name: string } | null> {
  const row = await first(em, (db) => db.selectFrom('brands').select(['id', 'name']).where('slug', '=', slug));
  return row === undefined ? null : { id: row.id, name: row.name };
}
