import { readKpis, type KpiRecord } from '@mint/db';
import type { UseCaseContext } from './context.ts';

/**
 * The brand's dashboard KPIs from its counters row (one primary-key read, constant time at any
 * number of units); zeros for a brand that has minted nothing. The counters are maintained in the
 * transactions that change what they count: total_tokens_minted and active_tokens per chunk,
 * batches_created on submit, active_tokens on activation and void, exported_printed when a batch
 * first reaches exported.
 */
export async function getMintKpis(ctx: UseCaseContext, brandId: string): Promise<KpiRecord> {
  return readKpis(ctx.db.em.fork(), brandId);
}
