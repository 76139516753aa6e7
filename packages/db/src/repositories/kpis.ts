import type { Em } from '../orm.ts';
import { changed } from './kysely.ts';

/** Changes to a brand's dashboard counters; omitted counters stay as they are. */
export interface KpiDelta {
  readonly totalTokensMinted?: number;
  readonly activeTokens?: number;
  readonly batchesCreated?: number;
  readonly exportedPrinted?: number;
}

/** Adds `delta` to the brand's counters in the entity manager's transaction (creating the row on first use). */
export async function bumpKpis(em: Em, brandId: string, delta: KpiDelta): Promise<void> {
  await changed(em, (db) => db.insertInto('mint_kpis')
    .values({
      brand_id: brandId, total_tokens_minted: delta.totalTokensMinted ?? 0, active_tokens: delta.activeTokens ?? 0,
      batches_created: delta.batchesCreated ?? 0, exported_printed: delta.exportedPrinted ?? 0,
    })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet((eb) => ({
      total_tokens_minted: eb('mint_kpis.total_tokens_minted', '+', eb.ref('excluded.total_tokens_minted')),
      active_tokens: eb('mint_kpis.active_tokens', '+', eb.ref('excluded.active_tokens')),
      batches_created: eb('mint_kpis.batches_created', '+', eb.ref('excluded.batches_created')),
      exported_printed: eb('mint_kpis.exported_printed', '+', eb.ref('excluded.exported_printed')),
    }))));
}
