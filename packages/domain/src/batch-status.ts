import { IllegalStateError } from './errors.ts';

/** Lifecycle status of a mint batch, in lifecycle order. */
export type BatchStatus =
  /** Created with its job; leaves when the job completes (minted) or the brand voids it. */
  | 'draft'
  /** Its job completed; leaves when a payload pack becomes ready (exported). */
  | 'minted'
  /** A payload pack is ready; the brand marks it printed. */
  | 'exported'
  /** Labels printed; the brand marks it applied. */
  | 'printed'
  /** Labels applied to products: final, cannot be voided. */
  | 'applied'
  /** Withdrawn; its identities answer 410 at the resolver. Final. */
  | 'voided';

/** All batch statuses in lifecycle order. */
export const batchStatuses: readonly BatchStatus[] = ['draft', 'minted', 'exported', 'printed', 'applied', 'voided'];

/** A compare-and-set move of a batch. */
export interface BatchMove {
  readonly from: BatchStatus;
  readonly to: BatchStatus;
}

const forward: Readonly<Record<BatchStatus, BatchStatus | undefined>> = {
  draft: 'minted',
  minted: 'exported',
  exported: 'printed',
  printed: 'applied',
  applied: undefined,
  voided: undefined,
};

/** True when a batch may move `from -> to`: one step forward, or to voided from anything but applied and voided. */
export function canMoveBatch(from: BatchStatus, to: BatchStatus): boolean {
  if (to === 'voided') return from !== 'applied' && from !== 'voided';
  return forward[from] === to;
}

/** The move `from -> to`, or an {@link IllegalStateError} naming both statuses. */
export function moveBatch(from: BatchStatus, to: BatchStatus): BatchMove {
  if (!canMoveBatch(from, to)) {
    throw new IllegalStateError(`mint batch cannot move from ${from} to ${to}`);
  }
  return { from, to };
}

/**
 * The statuses whose batch's units count towards the exported_printed KPI: labels printed
 * (printed) or on the products (applied). Exported alone does not count: every batch reaches it
 * when its automatic completion pack is ready, whether or not anything was printed.
 */
export const printedStatuses: readonly BatchStatus[] = ['printed', 'applied'];

/**
 * What the move adds to the exported_printed KPI for a batch of `mintedQuantity` units: the units
 * when it reaches printed, minus them when a printed batch is voided (applied is final), 0 for
 * every other move. The KPI is then the minted quantity of the batches now printed or applied.
 */
export function printedUnitsDelta(move: BatchMove, mintedQuantity: number): number {
  const counts = (status: BatchStatus) => (printedStatuses.includes(status) ? mintedQuantity : 0);
  return counts(move.to) - counts(move.from);
}

/**
 * A move requested through SetMintBatchStatus. Same rules as {@link moveBatch}, except that
 * `minted` is never set by hand: a batch becomes minted only in the transaction that completes its
 * job, so a manual move could not be consistent with the units actually minted.
 */
export function manualBatchMove(from: BatchStatus, to: BatchStatus): BatchMove {
  if (to === 'minted') throw new IllegalStateError('mint batch becomes minted only when its job completes');
  return moveBatch(from, to);
}

/**
 * True when the move withdraws the batch's identities: from then on they no longer resolve, so its
 * active units stop counting towards active_tokens, and a printed batch's units towards
 * exported_printed (its minted quantity keeps counting towards total_tokens_minted).
 */
export function withdrawsUnits(move: BatchMove): boolean {
  return move.to === 'voided';
}
