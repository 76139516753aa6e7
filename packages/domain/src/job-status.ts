/**
 * Mint job statuses and the only moves between them. A move is a value naming the status it
 * expects to leave; the database applies it as a compare-and-set, so a lost race is visible.
 */

/** Status of a mint job. */
export type JobStatus =
  /** Created by a passing preflight; CreateMintBatchFromJob moves it to QUEUED. */
  | 'PREFLIGHTED'
  /** Submitted, waiting for an executor; a claim moves it to RESERVED. */
  | 'QUEUED'
  /** Claimed under a lease; the first processing cycle moves it to PROCESSING. */
  | 'RESERVED'
  /** Units are being inserted; the chunk that reaches the requested quantity moves it to COMPLETED. */
  | 'PROCESSING'
  /** Terminal: every requested unit (or the lots' quantity) is minted. */
  | 'COMPLETED'
  /** Terminal: a permanent error, or retries exhausted; the reason is kept. */
  | 'FAILED';

/** All job statuses. */
export const jobStatuses: readonly JobStatus[] = ['PREFLIGHTED', 'QUEUED', 'RESERVED', 'PROCESSING', 'COMPLETED', 'FAILED'];

/** Statuses a job never leaves. */
export const terminalJobStatuses: readonly JobStatus[] = ['COMPLETED', 'FAILED'];

/** True when the job can no longer change. */
export function isTerminalJobStatus(status: JobStatus): boolean {
  return terminalJobStatuses.includes(status);
}

/**
 * Statuses an executor moves a job out of: a claim (QUEUED), the processing cycles (RESERVED,
 * PROCESSING) and giving up on a job it holds. PREFLIGHTED is left only by a caller's request
 * (CreateMintBatchFromJob, or voiding the batch), never by an executor.
 */
export const executorMovedJobStatuses: readonly JobStatus[] = ['QUEUED', 'RESERVED', 'PROCESSING'];

/**
 * True when no executor will move the job on its own: terminal, or PREFLIGHTED (waiting for a
 * caller). A watch of the job has nothing more to wait for and ends.
 */
export function isSettledJobStatus(status: JobStatus): boolean {
  return !executorMovedJobStatuses.includes(status);
}

/** A compare-and-set move of a job: apply `to` only where the row still has `from`. */
export interface JobMove {
  readonly from: JobStatus;
  readonly to: JobStatus;
}

/** The only legal moves; everything else is illegal. */
const legalMoves: readonly JobMove[] = [
  { from: 'PREFLIGHTED', to: 'QUEUED' },
  { from: 'QUEUED', to: 'RESERVED' },
  { from: 'RESERVED', to: 'PROCESSING' },
  { from: 'PROCESSING', to: 'COMPLETED' },
  // Lot mode and product-only mode finalise straight after the claim.
  { from: 'RESERVED', to: 'COMPLETED' },
  { from: 'PREFLIGHTED', to: 'FAILED' },
  { from: 'QUEUED', to: 'FAILED' },
  { from: 'RESERVED', to: 'FAILED' },
  { from: 'PROCESSING', to: 'FAILED' },
];

/** True when `from -> to` is a legal move. */
export function canMoveJob(from: JobStatus, to: JobStatus): boolean {
  return legalMoves.some((m) => m.from === from && m.to === to);
}

function move(from: JobStatus, to: JobStatus): JobMove {
  if (!canMoveJob(from, to)) throw new Error(`illegal job move ${from} -> ${to}`);
  return { from, to };
}

/** A passing preflight's job gets its batch (deprecated CreateMintBatchFromJob). */
export const enqueuePreflighted = (): JobMove => move('PREFLIGHTED', 'QUEUED');
/** An executor claims a queued job. */
export const claimJob = (): JobMove => move('QUEUED', 'RESERVED');
/** The first processing cycle of a claimed serial job. */
export const startProcessing = (): JobMove => move('RESERVED', 'PROCESSING');
/** The chunk that reaches the requested quantity. */
export const completeSerialJob = (): JobMove => move('PROCESSING', 'COMPLETED');
/** A lot-mode or product-only job finalises right after its claim. */
export const completeWithoutUnits = (): JobMove => move('RESERVED', 'COMPLETED');
/** Gives up on a job from its current, non-terminal status. */
export const failJob = (from: JobStatus): JobMove => move(from, 'FAILED');
