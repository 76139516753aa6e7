import { randomUUID } from 'node:crypto';
import { findPreflightByKey, insertPreflight, isUniqueViolation, type Em, type PreflightRecord, unitOfWork, transaction } from '@mint/db';
import { assertValid, isUuid, quantityViolations, type BlockingReason, type FieldViolation, type IdentityMode } from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { checkPreflight } from './draft-batch.ts';

/** Input of preflight_mint_batch. */
export interface PreflightInput {
  readonly brandId: string;
  readonly productId: string;
  readonly productionBatchId: string;
  readonly requestedQuantity: number;
  /** Scope of the intended job; null (not said) is {@link defaultPreflightIdentityMode}. */
  readonly identityMode: IdentityMode | null;
  readonly idempotencyKey: string | null;
}

/** The scope of a preflight that names no identity mode (the spec's named operation has no such parameter). */
export const defaultPreflightIdentityMode: IdentityMode = 'batch';

/** A stored preflight record. */
export interface PreflightView {
  readonly id: string;
  /** preflight_pass or preflight_blocked. */
  readonly status: string;
  /** pass or blocked. */
  readonly preflightResult: 'pass' | 'blocked';
  readonly blockingReasons: readonly BlockingReason[];
  readonly scopeType: IdentityMode;
  readonly requestedQuantity: number;
  readonly createdAt: Date;
  /** The PREFLIGHTED job a pass leaves behind for the deprecated CreateMintBatchFromJob. */
  readonly mintJobId: string | null;
}

function toView(row: PreflightRecord): PreflightView {
  const pass = row.result === 'pass';
  return {
    id: row.id,
    status: pass ? 'preflight_pass' : 'preflight_blocked',
    preflightResult: pass ? 'pass' : 'blocked',
    blockingReasons: row.blockingReasons,
    scopeType: row.scopeType as IdentityMode,
    requestedQuantity: row.requestedQuantity,
    createdAt: row.createdAt,
    mintJobId: row.mintJobId,
  };
}

/**
 * Checks eligibility without submitting and stores the verdict. A pass also creates a PREFLIGHTED
 * job (no batch) for the deprecated flow. A repeated idempotency key returns the first record.
 */
export async function preflightMintBatch(ctx: UseCaseContext, actor: Actor, request: PreflightInput): Promise<PreflightView> {
  const input = { ...request, identityMode: request.identityMode ?? defaultPreflightIdentityMode };
  const v: FieldViolation[] = quantityViolations(input.requestedQuantity);
  if (!isUuid(input.productionBatchId)) v.push({ field: 'batch_id', message: 'must be a uuid' });
  if (input.idempotencyKey !== null && !isUuid(input.idempotencyKey)) v.push({ field: 'idempotency_key', message: 'must be a uuid' });
  assertValid(v);
  void actor;
  try {
    return await transaction(ctx.db, (em) => preflightInTransaction(ctx, em, input));
  } catch (error) {
    if (isUniqueViolation(error) && input.idempotencyKey !== null) {
      const existing = await findPreflightByKey(unitOfWork(ctx.db), input.brandId, input.idempotencyKey);
      if (existing) return toView(existing);
    }
    throw error;
  }
}

async function preflightInTransaction(ctx: UseCaseContext, em: Em, input: PreflightInput & { readonly identityMode: IdentityMode }): Promise<PreflightView> {
  const { brandId } = input;
  if (input.idempotencyKey !== null) {
    const existing = await findPreflightByKey(em, brandId, input.idempotencyKey);
    if (existing) return toView(existing);
  }
  const { reasons } = await checkPreflight(em, brandId, {
    productId: input.productId,
    productionBatchId: input.productionBatchId,
    requestedQuantity: input.requestedQuantity,
  });
  const now = ctx.clock();
  const row: PreflightRecord = {
    brandId,
    id: randomUUID(),
    productId: input.productId,
    productionBatchId: input.productionBatchId,
    requestedQuantity: input.requestedQuantity,
    scopeType: input.identityMode,
    result: reasons.length === 0 ? 'pass' : 'blocked',
    blockingReasons: reasons,
    idempotencyKey: input.idempotencyKey,
    mintJobId: reasons.length === 0 ? randomUUID() : null,
    createdAt: now,
  };
  await insertPreflight(em, row);
  return toView(row);
}
