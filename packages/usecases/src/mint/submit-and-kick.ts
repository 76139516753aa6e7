import { kickUnitLimit, type MintRequest } from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { processMintJobBatch, type CycleResult } from './processing.ts';
import { submitMintRequest, type SubmitResult } from './submit.ts';

/** Result of {@link submitAndKick}. */
export interface SubmitAndKickResult {
  /** The submit's result: a created or replayed job, or the blocking reasons. */
  readonly submit: SubmitResult;
  /** True when the synchronous processing cycle ran without error. */
  readonly kicked: boolean;
  /** The cycle's progress when it ran. */
  readonly cycle: CycleResult | null;
  /** Why the kick did not run or failed (for the log; never shown to callers). */
  readonly kickError: unknown;
  /** A human-readable remark for the caller, or null when the job is complete. */
  readonly note: string | null;
}

/**
 * Submit + kick: submits the request (all of submit's rules and idempotency), then runs one
 * bounded processing cycle of at most `kickUnits` units (20,000) synchronously. A failed kick
 * never loses the job: submit already wrote it with its outbox message, the cycle's lease is
 * released, and an executor picks the job up. Blocked requests are not kicked.
 */
export async function submitAndKick(ctx: UseCaseContext, actor: Actor, request: MintRequest, kickUnits: number = kickUnitLimit): Promise<SubmitAndKickResult> {
  // Not published at once: this request runs the first cycle itself (the outbox relay hands the rest on).
  const submit = await submitMintRequest(ctx, actor, request, { publish: false });
  if (!submit.ok) return { submit, kicked: false, cycle: null, kickError: null, note: null };
  try {
    const cycle = await processMintJobBatch(ctx, request.brandId, submit.mintJobId, kickUnits);
    const note = cycle.done
      ? null
      : cycle.status === 'FAILED'
        ? 'the job failed; see list_mint_events'
        : `${cycle.mintedQuantity} of ${cycle.requestedQuantity} units minted; the executor mints the rest`;
    return { submit, kicked: true, cycle, kickError: null, note };
  } catch (kickError) {
    return { submit, kicked: false, cycle: null, kickError, note: 'the job is queued; the executor will process it' };
  }
}
