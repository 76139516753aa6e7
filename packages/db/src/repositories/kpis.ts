import type { Em } from '../orm.ts';
import { run } from './sql.ts';

/** Changes to a brand's dashboard counters; omitted counters stay as they are. */
export interface KpiDelta {
  readonly totalTokensMinted?: number;
  readonly activeTokens?: number;
  readonly batchesCreated?: number;
  readonly exportedPrinted?: number;
}

/** Adds `delta` to the brand's counters in the entity manager's transaction (creating the row on first use). */
export async function bumpKpis(em: Em, brandId: string, delta: KpiDelta): Promise<void> {
  await run(
    em,
    `insert into mint_kpis as k (brand_id, total_tokens_minted, active_tokens, batches_created, exported_printed)
     values (?, ?, ?, ?, ?)
     on conflict (brand_id) do update set
       total_tokens_minted = k.total_tokens_minted + excluded.total_tokens_minted,
       active_tokens = k.active_tokens + excluded.active_tokens,
       batches_created = k.batches_created + excluded.batches_created,
       exported_printed = k.exported_printed + excluded.exported_printed`,
    [brandId, delta.totalTokensMinted ?? 0, delta.activeTokens ?? 0, delta.batchesCreated ?? 0, delta.exportedPrinted ?? 0],
  );
}
