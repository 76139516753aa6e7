import { countUnitStates, findBatch, unitOfWork } from '@mint/db';
import { InvalidInputError, isUuid, NotFoundError, serialStates } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';

/** A batch's accounting of its serials. */
export interface BatchReconciliation {
  readonly mintBatchId: string;
  readonly requested: number;
  readonly minted: number;
  /** Units per lifecycle state (every state listed, 0 included). */
  readonly byState: Readonly<Record<string, number>>;
  /** Decommissioned units per reason. */
  readonly byReason: Readonly<Record<string, number>>;
  /** Requested serials not minted (yet). */
  readonly notMinted: number;
  /** True when the states add up to the minted quantity and minted plus not minted to the requested quantity. */
  readonly balanced: boolean;
}

/**
 * Accounts for every serial of a batch: requested, minted, per state and per decommissioning
 * reason, from one scan of the batch's units and their lifecycle rows. A batch whose counts do not
 * add up reports `balanced: false` (a serial listed nowhere). Missing or foreign batch: NotFoundError.
 */
export async function reconcileMintBatch(ctx: UseCaseContext, brandId: string, mintBatchId: string): Promise<BatchReconciliation> {
  if (!isUuid(mintBatchId)) throw new InvalidInputError([{ field: 'mint_batch_id', message: 'must be a uuid' }]);
  const em = unitOfWork(ctx.db);
  const batch = await findBatch(em, brandId, mintBatchId);
  if (batch === null) throw new NotFoundError(`mint batch ${mintBatchId} not found`);
  const counts = await countUnitStates(em, brandId, mintBatchId);
  const byState: Record<string, number> = Object.fromEntries(serialStates.map((s) => [s, 0]));
  const byReason: Record<string, number> = {};
  for (const c of counts) {
    byState[c.state] = (byState[c.state] ?? 0) + c.count;
    if (c.reason !== null) byReason[c.reason] = (byReason[c.reason] ?? 0) + c.count;
  }
  const listed = Object.values(byState).reduce((a, b) => a + b, 0);
  const requested = batch.requestedQuantity;
  const notMinted = Math.max(0, requested - batch.mintedQuantity);
  return {
    mintBatchId, requested, minted: batch.mintedQuantity, byState, byReason, notMinted,
    balanced: listed === batch.mintedQuantity && batch.mintedQuantity + notMinted === requested,
  };
}

/** The reconciliation as CSV (the batch's document of serialisation): one `category,name,count` row per figure. */
export function reconciliationCsv(r: BatchReconciliation): string {
  const rows = [
    ['category', 'name', 'count'], ['batch', 'requested', r.requested], ['batch', 'minted', r.minted], ['batch', 'not_minted', r.notMinted],
    ...Object.entries(r.byState).map(([s, n]) => ['state', s, n]), ...Object.entries(r.byReason).sort().map(([s, n]) => ['reason', s, n]),
    ['check', 'balanced', r.balanced ? 'yes' : 'no'],
  ];
  return `${rows.map((row) => row.join(',')).join('\n')}\n`;
}
