import type { ActivationMode, BatchStatus, IdentityMode, JobStatus } from '@mint/domain';
import type { Em } from '../orm.ts';
import { query, run } from './sql.ts';

/**
 * Row locks and bulk statements of the batch lifecycle and of unit activation. Activation takes a
 * share lock on the batches it touches and every batch move updates the batch row, so a void and
 * an activation of the same batch never interleave: the counter a void corrects always sees the
 * activations committed before it, and an activation that waited for a void sees `voided`.
 */

/** The lifecycle fields of a batch. */
export interface BatchState {
  readonly id: string;
  readonly mintJobId: string;
  readonly status: BatchStatus;
  readonly identityMode: IdentityMode;
  readonly activationMode: ActivationMode;
  readonly mintedQuantity: number;
}

interface BatchStateRow {
  id: string; mint_job_id: string; status: BatchStatus; identity_mode: IdentityMode; activation_mode: ActivationMode; minted_quantity: number;
}

const toState = (r: BatchStateRow): BatchState => ({
  id: r.id, mintJobId: r.mint_job_id, status: r.status, identityMode: r.identity_mode, activationMode: r.activation_mode,
  mintedQuantity: r.minted_quantity,
});

/** Reads a batch's lifecycle fields, taking a share lock on the row until the transaction ends; null when not the brand's. */
export async function lockBatchForShare(em: Em, brandId: string, batchId: string): Promise<BatchState | null> {
  const [row] = await query<BatchStateRow>(
    em,
    `select id, mint_job_id, status, identity_mode, activation_mode, minted_quantity from mint_batches where brand_id = ? and id = ? for share`,
    [brandId, batchId],
  );
  return row === undefined ? null : toState(row);
}

/** Reads a batch's lifecycle fields without locking; null when not the brand's. */
export async function readBatchState(em: Em, brandId: string, batchId: string): Promise<BatchState | null> {
  const [row] = await query<BatchStateRow>(
    em,
    `select id, mint_job_id, status, identity_mode, activation_mode, minted_quantity from mint_batches where brand_id = ? and id = ?`,
    [brandId, batchId],
  );
  return row === undefined ? null : toState(row);
}

/**
 * Share-locks (in id order, so two callers cannot deadlock) the batches that the brand's units
 * among `unitIds` belong to. Ids of other brands or of no unit contribute nothing.
 */
export async function lockBatchesOfUnits(em: Em, brandId: string, unitIds: readonly string[]): Promise<BatchState[]> {
  const rows = await query<BatchStateRow>(
    em,
    `select b.id, b.mint_job_id, b.status, b.identity_mode, b.activation_mode, b.minted_quantity
     from mint_batches b
     where b.brand_id = ? and b.id in (select u.mint_batch_id from mint_units u where u.brand_id = ? and u.id = any(?::uuid[]))
     order by b.id
     for share`,
    [brandId, brandId, `{${unitIds.join(',')}}`],
  );
  return rows.map(toState);
}

/** Units that moved from inactive to active, per batch. */
export interface ActivatedUnits {
  readonly mintBatchId: string;
  /** Ids of the units that changed, in id order. */
  readonly unitIds: readonly string[];
}

/** Activates every inactive unit of a batch, stamping `at`; returns how many changed (0 on a repeat). */
export async function activateUnitsOfBatch(em: Em, brandId: string, batchId: string, at: Date): Promise<number> {
  return run(
    em,
    `update mint_units set status = 'active', activated_at = ? where brand_id = ? and mint_batch_id = ? and status = 'inactive'`,
    [at, brandId, batchId],
  );
}

/** Activates the brand's inactive units among `unitIds`, stamping `at`; returns the changed units per batch (none on a repeat). */
export async function activateUnitsById(em: Em, brandId: string, unitIds: readonly string[], at: Date): Promise<ActivatedUnits[]> {
  const rows = await query<{ mint_batch_id: string; ids: string[] | string }>(
    em,
    `with changed as (
       update mint_units set status = 'active', activated_at = ?
       where brand_id = ? and id = any(?::uuid[]) and status = 'inactive'
       returning mint_batch_id, id
     )
     select mint_batch_id, array_agg(id::text order by id) as ids from changed group by mint_batch_id order by mint_batch_id`,
    [at, brandId, `{${unitIds.join(',')}}`],
  );
  return rows.map((r) => ({
    mintBatchId: r.mint_batch_id,
    unitIds: Array.isArray(r.ids) ? r.ids : r.ids.replace(/^\{|\}$/g, '').split(',').filter((x) => x !== ''),
  }));
}

/** Active units of a batch (a scan of the batch's units; used once, when the batch is voided). */
export async function countActiveUnitsOfBatch(em: Em, brandId: string, batchId: string): Promise<number> {
  const [row] = await query<{ n: string }>(
    em,
    `select count(*) as n from mint_units where brand_id = ? and mint_batch_id = ? and status = 'active'`,
    [brandId, batchId],
  );
  return Number(row?.n ?? 0);
}

/** The fields of a job the lifecycle operations need. */
export interface JobState {
  readonly id: string;
  readonly status: JobStatus;
  readonly scopeType: IdentityMode;
  readonly requestedQuantity: number;
  readonly productId: string;
  readonly productionBatchId: string | null;
}

/** Reads a job and locks its row until the transaction ends; null when not the brand's. */
export async function lockJob(em: Em, brandId: string, jobId: string): Promise<JobState | null> {
  const [row] = await query<{
    id: string; status: JobStatus; scope_type: IdentityMode; requested_quantity: number; product_id: string; production_batch_id: string | null;
  }>(
    em,
    `select id, status, scope_type, requested_quantity, product_id, production_batch_id from mint_jobs where brand_id = ? and id = ? for update`,
    [brandId, jobId],
  );
  return row === undefined ? null : {
    id: row.id, status: row.status, scopeType: row.scope_type, requestedQuantity: row.requested_quantity,
    productId: row.product_id, productionBatchId: row.production_batch_id,
  };
}
