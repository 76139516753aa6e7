import {
  appendEvents,
  bumpKpis,
  countActiveUnitsOfBatch,
  createPendingPack,
  findBatch,
  lockJob,
  moveBatchStatus,
  moveJob,
  notifyResolverAnswers,
  readBatchState,
  type BatchRecord,
  type BatchState,
  type Em,
  storedPackProfile,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  ConflictError,
  InvalidInputError,
  NotFoundError,
  batchStatuses,
  failJob,
  isTerminalJobStatus,
  isUuid,
  manualBatchMove,
  printedUnitsDelta,
  voidPackProfile,
  withdrawsUnits,
  type BatchMove,
  type BatchStatus,
  type FieldViolation,
  type NewEvent,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';

/** Longest reason kept in the audit event. */
export const maxStatusReasonLength = 500;

/** Parameters of {@link setMintBatchStatus}. */
export interface SetMintBatchStatusInput {
  readonly brandId: string;
  readonly mintBatchId: string;
  /** Target status; must be one legal step from the current one (minted is never set by hand). */
  readonly status: BatchStatus;
  /** Why, kept in the audit event; at most 500 characters. */
  readonly reason: string | null;
}

/**
 * Moves a batch of the brand to `status` (set_mint_batch_status) as a compare-and-set, with a
 * mint_batch_status_changed event (from, to, reason, actor) and the KPI changes of
 * {@link applyBatchMove} in the same transaction. Missing or foreign batch: NotFoundError; an
 * illegal move (including a manual `minted`): IllegalStateError; a concurrent move: ConflictError.
 * Returns the batch after the move.
 */
export async function setMintBatchStatus(ctx: UseCaseContext, actor: Actor, input: SetMintBatchStatusInput): Promise<BatchRecord> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.mintBatchId)) v.push({ field: 'mint_batch_id', message: 'must be a uuid' });
  if (!batchStatuses.includes(input.status)) v.push({ field: 'status', message: `must be one of ${batchStatuses.join(', ')}` });
  if (input.reason !== null && input.reason.length > maxStatusReasonLength) {
    v.push({ field: 'reason', message: `must be at most ${maxStatusReasonLength} characters` });
  }
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId, mintBatchId } = input;
  await transaction(ctx.db, async (em) => {
    const batch = await readBatchState(em, brandId, mintBatchId);
    if (batch === null) throw new NotFoundError(`mint batch ${mintBatchId} not found`);
    const move = manualBatchMove(batch.status, input.status);
    await applyBatchMove(em, ctx.clock(), { brandId, batch, move, actor: actor.id, reason: input.reason });
  });
  const after = await findBatch(unitOfWork(ctx.db), brandId, mintBatchId);
  if (after === null) throw new NotFoundError(`mint batch ${mintBatchId} not found`);
  return after;
}

/** A batch move to apply inside a caller's transaction. */
export interface BatchChange {
  readonly brandId: string;
  /** The batch as read in the same transaction. */
  readonly batch: BatchState;
  readonly move: BatchMove;
  /** User or API key id; null for the system (e.g. a pack generator). */
  readonly actor: string | null;
  readonly reason: string | null;
}

/**
 * Applies a batch move inside the caller's transaction: the compare-and-set (ConflictError when
 * the batch moved meanwhile), the mint_batch_status_changed event, and the counters.
 * - exported_printed is the minted quantity of the brand's batches now printed or applied:
 *   reaching printed adds the batch's minted quantity, voiding a printed batch subtracts it
 *   (applied is final); exported alone never counts, since every batch reaches it with its
 *   automatic completion pack ({@link printedUnitsDelta}).
 * - Voiding withdraws the batch's identities (the resolver answers 410 for them): its currently
 *   active units are subtracted from active_tokens, and since a voided batch can never be
 *   activated again the counter stays equal to the active units of non-voided batches. The units
 *   keep their own status. A job still running for a voided draft batch is failed (reason
 *   "mint batch voided") in the same transaction so no executor keeps minting into it. A batch
 *   with minted units also gets a pending void pack: its `epcis-decommissioning.json` holds the
 *   EPCIS decommissioning events of exactly those units, for the brand's traceability partners
 *   (listed and downloaded like every pack). The resolvers hear of it on the link change feed
 *   (the batch's GTIN), which also purges the lot answers a caching proxy keeps.
 * Call it from pack generation when a pack becomes ready (minted -> exported).
 */
export async function applyBatchMove(em: Em, now: Date, change: BatchChange): Promise<void> {
  const { brandId, batch, move } = change;
  // The update takes the row lock: activations of this batch (which share-lock it) have committed
  // before it, and wait for this transaction after it.
  if (!(await moveBatchStatus(em, brandId, batch.id, move, now))) {
    throw new ConflictError(`mint batch ${batch.id} moved concurrently`);
  }
  const printed = printedUnitsDelta(move, batch.mintedQuantity);
  if (printed !== 0) await bumpKpis(em, brandId, { exportedPrinted: printed });
  const events: NewEvent[] = [
    {
      brandId,
      eventType: 'mint_batch_status_changed',
      entityType: 'mint_batch',
      entityId: batch.id,
      actor: change.actor,
      payload: { from: move.from, to: move.to, reason: change.reason, actor: change.actor },
    },
  ];
  if (withdrawsUnits(move)) {
    const active = await countActiveUnitsOfBatch(em, brandId, batch.id);
    if (active > 0) await bumpKpis(em, brandId, { activeTokens: -active });
    events[0] = { ...events[0]!, payload: { ...events[0]!.payload, withdrawn_active_units: active } };
    // Its lots' answers change (voided): the resolvers and a caching proxy in front forget them.
    if (batch.gtin !== null) await notifyResolverAnswers(em, brandId, [batch.gtin]);
    if (batch.mintedQuantity > 0) await createPendingPack(em, brandId, batch.id, now, { purpose: 'void', profile: storedPackProfile(voidPackProfile) });
    const job = await lockJob(em, brandId, batch.mintJobId);
    if (job !== null && !isTerminalJobStatus(job.status)) {
      if (!(await moveJob(em, brandId, job.id, failJob(job.status), now, 'mint batch voided'))) {
        throw new ConflictError(`mint job ${job.id} moved concurrently`);
      }
      events.push({
        brandId,
        eventType: 'mint_job_failed',
        entityType: 'mint_batch',
        entityId: batch.id,
        actor: change.actor,
        payload: { reason: 'mint batch voided', from: job.status, mint_job_id: job.id },
      });
    }
  }
  await appendEvents(em, now, events);
}
