import { readKpis, type KpiRecord, standalone } from '@mint/db';
import type { UseCaseContext } from '../context.ts';

/**
 * The brand's dashboard KPIs: the sums of its counter rows (one primary-key range read, constant time at any
 * number of units); zeros for a brand that has minted nothing. The counters are maintained in the
 * transactions that change what they count: total_tokens_minted and active_tokens per chunk,
 * batches_created on submit, active_tokens on activation and void, exported_printed on batch
 * moves. exported_printed counts what was printed or applied, not what was exported: the minted
 * quantity of the brand's batches now in printed or applied (added when a batch reaches printed,
 * subtracted when a printed batch is voided; every batch reaches exported with its automatic
 * completion pack, so exported alone never counts). One statement outside any transaction, so it runs on the entity
 * manager's pool without a fork (as the submit's statements do).
 */
export async function getMintKpis(ctx: UseCaseContext, brandId: string): Promise<KpiRecord> {
  return readKpis(standalone(ctx.db), brandId);
}
