import { sql, type OnConflictBuilder } from 'kysely';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { changed } from './kysely.ts';

/**
 * Counter rows per brand. Every transaction adds to the row of its own connection
 * (`pg_backend_pid() % kpiShards`), so concurrent submits and chunks of one brand, each on its own
 * connection, no longer queue for one row lock at commit; reads sum the brand's rows, which stays
 * exact because every increment commits with what it counts. Measured with `npm run bench:submit`
 * (16 connections, one brand): the single row held commits to one at a time.
 */
export const kpiShards = 64;

/** The shard of the current connection, as SQL. */
export const kpiShard = () => sql<number>`pg_backend_pid() % ${sql.lit(kpiShards)}`;

/** Changes to a brand's dashboard counters; omitted counters stay as they are. */
export interface KpiDelta {
  readonly totalTokensMinted?: number;
  readonly activeTokens?: number;
  readonly batchesCreated?: number;
  readonly exportedPrinted?: number;
}

/** Adds `delta` to the brand's counters in the entity manager's transaction (creating its connection's shard row on first use). */
export async function bumpKpis(em: Em, brandId: string, delta: KpiDelta): Promise<void> {
  await changed(em, (db) =>
    db
      .insertInto('mint_kpis')
      .values({
        brand_id: brandId,
        shard: kpiShard(),
        total_tokens_minted: delta.totalTokensMinted ?? 0,
        active_tokens: delta.activeTokens ?? 0,
        batches_created: delta.batchesCreated ?? 0,
        exported_printed: delta.exportedPrinted ?? 0,
      })
      .onConflict(addToShard),
  );
}

/**
 * The conflict clause of every insert into mint_kpis: when the connection's shard row exists, the
 * inserted counters are added to it (a counter the insert leaves out is 0).
 */
export function addToShard<DB extends Tables>(oc: OnConflictBuilder<DB, 'mint_kpis'>) {
  return (oc as unknown as OnConflictBuilder<Tables, 'mint_kpis'>).columns(['brand_id', 'shard']).doUpdateSet((eb) => ({
    total_tokens_minted: eb('mint_kpis.total_tokens_minted', '+', eb.ref('excluded.total_tokens_minted')),
    active_tokens: eb('mint_kpis.active_tokens', '+', eb.ref('excluded.active_tokens')),
    batches_created: eb('mint_kpis.batches_created', '+', eb.ref('excluded.batches_created')),
    exported_printed: eb('mint_kpis.exported_printed', '+', eb.ref('excluded.exported_printed')),
  }));
}
