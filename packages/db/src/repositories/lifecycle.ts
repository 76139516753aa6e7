import { unitResolverUrl, type ActivationMode, type BatchStatus, type IdentityMode, type JobStatus } from '@mint/domain';
import { sql, type Kysely } from 'kysely';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { first, rawRows, rows } from './kysely.ts';
import { unitIdOfRow, unitKeysOfIdsSql } from './units.ts';

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
  /** The GTIN its units and lots carry; null for a batch without one. */
  readonly gtin: string | null;
}

/** The brand's batches with their lifecycle fields. */
function selectBatchStates(db: Kysely<Tables>, brandId: string) {
  return db
    .selectFrom('mint_batches')
    .select(['id', 'mint_job_id', 'status', 'identity_mode', 'activation_mode', 'minted_quantity', 'gtin'])
    .where('brand_id', '=', brandId);
}

const toState = (r: Awaited<ReturnType<ReturnType<typeof selectBatchStates>['execute']>>[number]): BatchState => ({
  id: r.id,
  mintJobId: r.mint_job_id,
  status: r.status as BatchStatus,
  identityMode: r.identity_mode as IdentityMode,
  activationMode: r.activation_mode as ActivationMode,
  mintedQuantity: r.minted_quantity,
  gtin: r.gtin,
});

/** Reads a batch's lifecycle fields, taking a share lock on the row until the transaction ends; null when not the brand's. */
export async function lockBatchForShare(em: Em, brandId: string, batchId: string): Promise<BatchState | null> {
  const row = await first(em, (db) => selectBatchStates(db, brandId).where('id', '=', batchId).forShare());
  return row === undefined ? null : toState(row);
}

/** Reads a batch's lifecycle fields without locking; null when not the brand's. */
export async function readBatchState(em: Em, brandId: string, batchId: string): Promise<BatchState | null> {
  const row = await first(em, (db) => selectBatchStates(db, brandId).where('id', '=', batchId));
  return row === undefined ? null : toState(row);
}

/**
 * Share-locks (in id order, so two callers cannot deadlock) the batches that the brand's units
 * among `unitIds` belong to. Ids of other brands or of no unit contribute nothing.
 */
export async function lockBatchesOfUnits(em: Em, brandId: string, unitIds: readonly string[]): Promise<BatchState[]> {
  const found = await rows(em, (db) =>
    selectBatchStates(db, brandId)
      .where(
        'id',
        'in',
        sql<string>`(select u.mint_batch_id from ${unitKeysOfIdsSql(brandId, unitIds)} k
      join mint_units u on u.brand_id = ${brandId}::uuid and u.mint_batch_id = k.mint_batch_id and u.seq = k.seq)`,
      )
      .orderBy('id')
      .forShare(),
  );
  return found.map(toState);
}

/** A unit an activation commissioned, as its EPCIS event names it. */
export interface CommissionedUnit {
  readonly seq: number;
  /** The unit's EPC: its resolver URL (a GS1 Digital Link URI for a unit with a GTIN). */
  readonly epc: string;
  /** True when it was encoded before (EPCIS already knows it: its commissioning is an OBSERVE). */
  readonly encoded: boolean;
}

/** Units that moved from inactive to active, per batch. */
export interface ActivatedUnits {
  readonly mintBatchId: string;
  /** Ids of the units that changed, in id order. */
  readonly unitIds: readonly string[];
  /** The same units in seq order, for their commissioning events. */
  readonly units: readonly CommissionedUnit[];
}

interface CommissionedRow {
  seq: number;
  serial: string;
  resolver_base_url: string;
  gtin: string | null;
  encoded: boolean;
}

const toCommissioned = (r: CommissionedRow): CommissionedUnit => ({
  seq: r.seq,
  epc: unitResolverUrl(r.resolver_base_url, r.gtin, r.serial),
  encoded: r.encoded,
});

/**
 * Unit rows (aliased `mint_units`) that a manual activation may commission: no lifecycle row, or
 * one saying encoded. A scrapped, returned or decommissioned unit is also inactive, but activation
 * never puts it back into circulation (only a reactivation does, for the reasons that allow it).
 */
function commissionable() {
  return sql<boolean>`not exists (select 1 from unit_states s where s.brand_id = mint_units.brand_id and s.mint_batch_id = mint_units.mint_batch_id
    and s.seq = mint_units.seq and s.state <> 'encoded')`;
}

/**
 * Activates (commissions) every inactive issued or encoded unit of a batch, stamping `at`; returns
 * the units that changed, in seq order (none on a repeat). The encoded units' lifecycle rows go, as
 * they are commissioned now (one statement: the update still sees them, to tell encoded units).
 */
export async function activateUnitsOfBatch(em: Em, brandId: string, batchId: string, at: Date): Promise<CommissionedUnit[]> {
  const found = await rawRows(
    em,
    sql<CommissionedRow>`
    with changed as (
      update mint_units set status = 'active', activated_at = ${at}::timestamptz
      where brand_id = ${brandId}::uuid and mint_batch_id = ${batchId}::uuid and status = 'inactive' and ${commissionable()}
      returning seq, serial),
    uncoded as (
      delete from unit_states where brand_id = ${brandId}::uuid and mint_batch_id = ${batchId}::uuid and state = 'encoded' returning seq)
    select c.seq, c.serial, b.resolver_base_url, b.gtin, (e.seq is not null) as encoded
    from changed c join mint_batches b on b.brand_id = ${brandId}::uuid and b.id = ${batchId}::uuid left join uncoded e on e.seq = c.seq
    order by c.seq`,
  );
  return found.map(toCommissioned);
}

/**
 * Activates (commissions) the brand's inactive issued or encoded units among `unitIds`, stamping
 * `at`; returns the changed units per batch (none on a repeat).
 */
export async function activateUnitsById(em: Em, brandId: string, unitIds: readonly string[], at: Date): Promise<ActivatedUnits[]> {
  const found = await rows(em, (db) =>
    db
      .with('changed', (qc) =>
        qc
          .updateTable('mint_units')
          .set({ status: 'active', activated_at: at })
          .from(sql`${unitKeysOfIdsSql(brandId, unitIds)}`.as('k'))
          .where('brand_id', '=', brandId)
          .whereRef('mint_units.mint_batch_id', '=', sql.ref('k.mint_batch_id'))
          .whereRef('mint_units.seq', '=', sql.ref('k.seq'))
          .where('status', '=', 'inactive')
          .where(commissionable())
          .returning(['mint_units.mint_batch_id', 'mint_units.id', 'mint_units.seq', 'mint_units.serial']),
      )
      .with('uncoded', (qc) =>
        qc
          .deleteFrom('unit_states')
          .using('changed')
          .where('unit_states.brand_id', '=', brandId)
          .whereRef('unit_states.mint_batch_id', '=', 'changed.mint_batch_id')
          .whereRef('unit_states.seq', '=', 'changed.seq')
          .returning(['unit_states.mint_batch_id', 'unit_states.seq']),
      )
      .selectFrom('changed')
      .innerJoin('mint_batches as b', (j) => j.on('b.brand_id', '=', brandId).onRef('b.id', '=', 'changed.mint_batch_id'))
      .leftJoin('uncoded', (j) => j.onRef('uncoded.mint_batch_id', '=', 'changed.mint_batch_id').onRef('uncoded.seq', '=', 'changed.seq'))
      .select([
        'changed.mint_batch_id',
        'changed.id',
        'changed.seq',
        'changed.serial',
        'b.resolver_base_url',
        'b.gtin',
        sql<boolean>`uncoded.seq is not null`.as('encoded'),
      ]),
  );
  const byBatch = new Map<string, typeof found>();
  for (const r of found) {
    const list = byBatch.get(r.mint_batch_id) ?? [];
    list.push(r);
    byBatch.set(r.mint_batch_id, list);
  }
  return [...byBatch.keys()].sort().map((mintBatchId) => {
    const list = byBatch.get(mintBatchId)!;
    return {
      mintBatchId,
      unitIds: list.map(unitIdOfRow).sort(),
      units: list.sort((a, b) => a.seq - b.seq).map(toCommissioned),
    };
  });
}

/** Active units of a batch (a scan of the batch's units; used once, when the batch is voided). */
export async function countActiveUnitsOfBatch(em: Em, brandId: string, batchId: string): Promise<number> {
  const row = await first(em, (db) =>
    db
      .selectFrom('mint_units')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('brand_id', '=', brandId)
      .where('mint_batch_id', '=', batchId)
      .where('status', '=', 'active'),
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
  const row = await first(em, (db) =>
    db
      .selectFrom('mint_jobs')
      .select(['id', 'status', 'scope_type', 'requested_quantity', 'product_id', 'production_batch_id'])
      .where('brand_id', '=', brandId)
      .where('id', '=', jobId)
      .forUpdate(),
  );
  return row === undefined
    ? null
    : {
        id: row.id,
        status: row.status as JobStatus,
        scopeType: row.scope_type as IdentityMode,
        requestedQuantity: row.requested_quantity,
        productId: row.product_id,
        productionBatchId: row.production_batch_id,
      };
}
