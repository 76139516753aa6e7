import { sql } from 'kysely';
import type { Database, Em } from './orm.ts';
import { kysely, rows } from './repositories/kysely.ts';

/**
 * How every table of the schema is laid out on Citus; the one place that says it. A new table is
 * refused by a test until it is named here.
 */

/** The table the tenant tables are co-located with. */
export const colocationTable = 'mint_jobs';

/**
 * Tenant tables: distributed by `brand_id`, co-located, so every statement naming one brand is
 * routed to one shard and joins within a brand stay on one node.
 */
export const distributedTables = [
  'mint_jobs',
  'mint_batches',
  'brand_serial_keys',
  'mint_units',
  'mint_lots',
  'mint_events',
  'mint_kpis',
  'mint_preflights',
  'payload_packs',
  'products',
  'production_batches',
  'product_imports',
  'import_keys',
  'memberships',
  'idempotency_records',
  'resolver_links',
  'scan_events',
  'scan_ingest_batches',
  'scan_alert_settings',
  'scan_daily_rollups',
  'scan_rollup_days',
  'webhook_endpoints',
  'webhook_deliveries',
  'webhook_fanouts',
  'passport_drafts',
  'passport_versions',
  'unit_states',
  'serial_moves',
  'serial_move_refusals',
  'epcis_events',
  'container_settings',
  'container_mints',
  'containers',
  'unit_containers',
  'container_ops',
  'partners',
  'partner_grants',
  'allocation_requests',
  'unit_allocations',
  'allocation_floors',
] as const;

/**
 * Reference tables: copied to every node. Their keys cannot include `brand_id` (`api_keys` is found
 * by `UNIQUE (lookup_id)`, `brands` by `UNIQUE (slug)` and its domain, `users` by e-mail, `outbox`
 * by its `id` alone, `passport_access_keys` by its lookup id like `api_keys`, `passport_signing_keys`
 * are the service's, not a brand's), and they are small or short-lived.
 */
export const referenceTables = ['api_keys', 'outbox', 'brands', 'users', 'passport_access_keys', 'passport_signing_keys'] as const;

/** Tables of the tooling that stay on the coordinator only (the migrator's bookkeeping). */
export const localTables = ['mikro_orm_migrations'] as const;

const citusOf = new WeakMap<object, Promise<boolean>>();

/**
 * Whether `em`'s database has the `citus` extension (asked once per database), for the few
 * statements that take another form on Citus.
 */
export function onCitus(em: Em): Promise<boolean> {
  const key = em.getDriver();
  let known = citusOf.get(key);
  if (known === undefined) {
    known = rows(em, (k) => k.selectNoFrom(sql<boolean>`exists (select 1 from pg_extension where extname = 'citus')`.as('present'))).then(
      (r) => r[0]?.present === true,
    );
    citusOf.set(key, known);
    known.catch(() => citusOf.delete(key));
  }
  return known;
}

/** What {@link distributeForCitus} did. */
export type DistributionOutcome =
  /** The `citus` extension is not installed: nothing to do (plain PostgreSQL). */
  | { readonly citus: false }
  /** Tables distributed or made reference tables by this call (those already laid out are skipped). */
  | { readonly citus: true; readonly distributed: readonly string[]; readonly reference: readonly string[] };

/**
 * The distribution step of `mintctl migrate`, run after the migrations: when the `citus` extension
 * is present, makes the reference tables reference tables and distributes the tenant tables by
 * `brand_id`, co-located with {@link colocationTable}. Safe to repeat: tables already in Citus's
 * metadata are left as they are. On plain PostgreSQL it does nothing.
 */
export async function distributeForCitus(db: Database): Promise<DistributionOutcome> {
  const em = db.em.fork();
  const installed = await rows(em, (k) => k.selectNoFrom(sql<boolean>`exists (select 1 from pg_extension where extname = 'citus')`.as('present')));
  if (installed[0]?.present !== true) return { citus: false };
  // Citus's metadata: every table it already distributes or replicates.
  const laidOut = new Set(
    (await sql<{ name: string }>`select logicalrelid::regclass::text as name from pg_dist_partition`.execute(kysely(em))).rows.map((r) => r.name),
  );
  const reference: string[] = [];
  for (const table of referenceTables) {
    if (laidOut.has(table)) continue;
    await rows(em, (k) => k.selectNoFrom(sql<string>`create_reference_table(${table})::text`.as('done')));
    reference.push(table);
  }
  const distributed: string[] = [];
  for (const table of [colocationTable, ...distributedTables.filter((t) => t !== colocationTable)]) {
    if (laidOut.has(table)) continue;
    await rows(em, (k) =>
      k.selectNoFrom(
        table === colocationTable
          ? sql<string>`create_distributed_table(${table}, 'brand_id')::text`.as('done')
          : sql<string>`create_distributed_table(${table}, 'brand_id', colocate_with => ${colocationTable})::text`.as('done'),
      ),
    );
    distributed.push(table);
  }
  return { citus: true, distributed, reference };
}
