import { randomUUID } from 'node:crypto';
import { isTerminalJobStatus, type JobMove, type JobStatus, type Lease, type LeaseState, type NewEvent } from '@mint/domain';
import type { QueryCreator } from 'kysely';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { batchColumns, toBatchRecords, type BatchRecord, type BatchRow } from './batches.ts';
import { eventFanouts, gatedEventInsert, type EventParams } from './events.ts';
import { changed, first, prepare, preparedRows, rows } from './kysely.ts';
import { setLocalSql, timeoutSetting } from './session.ts';

/**
 * Applies a job move as a compare-and-set: the row changes only if it still has `move.from`.
 * Returns false when the race was lost (the caller decides whether that is a conflict).
 * Reaching a terminal status stamps finished_at and releases the lease.
 */
export async function moveJob(em: Em, brandId: string, jobId: string, move: JobMove, at: Date, lastError: string | null = null): Promise<boolean> {
  return (await changed(em, (db) => jobMoveUpdate(db, brandId, jobId, move, at, lastError))) === 1;
}

/** The update of {@link moveJob}, for statements that make the move beside other writes. */
export function jobMoveUpdate(db: QueryCreator<Tables>, brandId: string, jobId: string, move: JobMove, at: Date, lastError: string | null = null) {
  const terminal = isTerminalJobStatus(move.to);
  return db
    .updateTable('mint_jobs')
    .set({
      status: move.to,
      updated_at: at,
      ...(terminal ? { finished_at: at, lease_owner: null, lease_expires_at: null } : {}),
      ...(lastError !== null ? { last_error: lastError } : {}),
    })
    .where('brand_id', '=', brandId)
    .where('id', '=', jobId)
    .where('status', '=', move.from);
}

/** A job's lease as {@link readJobLease} reads it, with the job's batch. */
export interface JobLeaseRead {
  /** The lease columns, as the domain's claim rules read them. */
  readonly lease: LeaseState;
  /** The job's batch; null before it has one (PREFLIGHTED). */
  readonly batch: BatchRecord | null;
}

/** The statement of {@link readJobLease}, compiled once. */
const jobLease = prepare('read_job_lease', (db, p: { brandId: string; jobId: string; lockTimeout: string }) =>
  db
    .with(
      (cte) => cte('session').materialized(),
      (qc) => qc.selectNoFrom(setLocalSql('lock_timeout', p.lockTimeout).as('value')),
    )
    .selectFrom('mint_jobs as j')
    .innerJoin('session', (join) => join.onTrue())
    .leftJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'j.brand_id').onRef('b.mint_job_id', '=', 'j.id'))
    .leftJoin('products as p', (join) => join.onRef('p.brand_id', '=', 'b.brand_id').onRef('p.id', '=', 'b.product_id'))
    .select(['j.status as job_status', 'j.lease_owner', 'j.lease_expires_at', 'j.lease_token', ...batchColumns])
    .where('j.brand_id', '=', (eb) => eb.cast<string>(eb.val(p.brandId), 'uuid'))
    .where('j.id', '=', (eb) => eb.cast<string>(eb.val(p.jobId), 'uuid')),
);

/**
 * The lease columns of a job and its batch (as findBatchOfJob reads it), in one statement that
 * also sets the transaction's lock timeout to `lockTimeoutMs`: from then on, a statement waiting
 * longer for a lock (the claim's compare-and-set, behind a stuck chunk transaction) fails with
 * SQLSTATE 55P03 instead of waiting on. Null when the job does not exist. Call inside a transaction.
 */
export async function readJobLease(em: Em, brandId: string, jobId: string, lockTimeoutMs: number): Promise<JobLeaseRead | null> {
  const [row] = await preparedRows(em, jobLease, { brandId, jobId, lockTimeout: timeoutSetting(lockTimeoutMs) });
  if (!row) return null;
  const { job_status: status, lease_owner: owner, lease_expires_at: expiresAt, lease_token: token, ...batch } = row;
  return {
    lease: { status: status as JobStatus, owner, token, expiresAt: expiresAt === null ? null : new Date(expiresAt) },
    batch: batch.id === null ? null : (await toBatchRecords(em, brandId, [batch as BatchRow]))[0]!,
  };
}

/** The parameters of the claim statement. */
interface ClaimParams extends EventParams {
  jobId: string;
  fromStatus: string;
  toStatus: string;
  token: number;
  expiresAt: Date | null;
  owner: string;
  newExpiresAt: Date;
  withEvent: boolean;
}

/** The statement of {@link claimJobLease}, compiled once. */
const claim = prepare('claim_job_lease', (db, p: ClaimParams) =>
  db
    .with('claimed', (qc) =>
      qc
        .updateTable('mint_jobs')
        .set((eb) => ({
          status: eb.cast<string>(eb.val(p.toStatus), 'text'),
          lease_owner: eb.cast<string>(eb.val(p.owner), 'text'),
          lease_expires_at: eb.cast<Date>(eb.val(p.newExpiresAt), 'timestamptz'),
          lease_token: eb('lease_token', '+', 1),
          updated_at: eb.cast<Date>(eb.val(p.at), 'timestamptz'),
        }))
        .where('brand_id', '=', (eb) => eb.cast<string>(eb.val(p.brandId), 'uuid'))
        .where('id', '=', (eb) => eb.cast<string>(eb.val(p.jobId), 'uuid'))
        .where('status', '=', (eb) => eb.cast<string>(eb.val(p.fromStatus), 'text'))
        .where('lease_token', '=', (eb) => eb.cast<number>(eb.val(p.token), 'integer'))
        .where((eb) => eb('lease_expires_at', 'is not distinct from', eb.cast<Date | null>(eb.val(p.expiresAt), 'timestamptz')))
        .returning('lease_token'),
    )
    // The claim's event, only with a move and only when the claim won.
    .with('e', (qc) => gatedEventInsert(qc, 'claimed', p, p.withEvent))
    .with('fanouts', (qc) => eventFanouts(qc, p.brandId))
    .selectFrom('claimed')
    .select('lease_token'),
);

/**
 * Takes the lease of a job as a compare-and-set on the state the claim was decided on (status,
 * token and expiry), applying `move` when given and bumping the fencing token, and writes `event`
 * (the claim's, stamped `at`, with its webhook fan-out markers) in the same statement when the claim
 * won. Returns the new token, or null when the row changed since it was read (someone else
 * claimed or renewed): then nothing was written.
 */
export async function claimJobLease(
  em: Em,
  brandId: string,
  jobId: string,
  seen: LeaseState,
  move: JobMove | null,
  owner: string,
  expiresAt: Date,
  at: Date,
  event: NewEvent | null = null,
): Promise<number | null> {
  const [row] = await preparedRows(em, claim, {
    brandId,
    jobId,
    fromStatus: move?.from ?? seen.status,
    toStatus: move?.to ?? seen.status,
    token: seen.token,
    expiresAt: seen.expiresAt,
    owner,
    newExpiresAt: expiresAt,
    at,
    withEvent: event !== null,
    eventId: randomUUID(),
    eventType: event?.eventType ?? '',
    entityType: event?.entityType ?? '',
    entityId: event?.entityId ?? '',
    payload: JSON.stringify(event?.payload ?? {}),
    actor: event?.actor ?? null,
  });
  return row?.lease_token ?? null;
}

/**
 * The fencing check of a holder's write: extends the lease to `expiresAt` only where the job still
 * has the holder's owner and token and is not terminal. Run it first in every chunk transaction;
 * false means the lease was lost and the transaction must write nothing. The row lock it takes
 * keeps a takeover out until the chunk commits. A committed renewal is progress, so it also resets
 * the job's failed-attempt count.
 */
export async function renewJobLease(em: Em, lease: Lease, expiresAt: Date, at: Date): Promise<boolean> {
  return (await changed(em, (db) => leaseRenewal(db, lease, expiresAt, at))) === 1;
}

/** The update of {@link renewJobLease}, for statements that renew the lease beside other writes (its values may be a prepared statement's parameters). */
export function leaseRenewal(db: QueryCreator<Tables>, lease: Lease, expiresAt: Date, at: Date) {
  return db
    .updateTable('mint_jobs')
    .set({ lease_expires_at: expiresAt, updated_at: at, attempts: 0 })
    .where('brand_id', '=', lease.brandId)
    .where('id', '=', lease.jobId)
    .where('lease_owner', '=', lease.owner)
    .where('lease_token', '=', lease.token)
    .where('status', 'in', ['QUEUED', 'RESERVED', 'PROCESSING']);
}

/** Gives a lease back so another worker can claim the job at once; false when it was no longer held. */
export async function releaseJobLease(em: Em, lease: Lease, at: Date): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .updateTable('mint_jobs')
        .set({ lease_owner: null, lease_expires_at: null, updated_at: at })
        .where('brand_id', '=', lease.brandId)
        .where('id', '=', lease.jobId)
        .where('lease_owner', '=', lease.owner)
        .where('lease_token', '=', lease.token),
    )) === 1
  );
}

/**
 * Jobs the sweeper hands back to the bus: QUEUED jobs nobody holds, untouched since `queuedBefore`,
 * and RESERVED or PROCESSING jobs whose lease is gone or lapsed at `now`, oldest first.
 */
export async function findJobsToSweep(em: Em, now: Date, queuedBefore: Date, limit: number): Promise<{ id: string; brandId: string }[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_jobs')
      .select(['id', 'brand_id'])
      .where('status', 'in', ['QUEUED', 'RESERVED', 'PROCESSING'])
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<=', now)]))
      .where('updated_at', '<', queuedBefore)
      .orderBy('updated_at')
      .limit(limit),
  );
  return found.map((r) => ({ id: r.id, brandId: r.brand_id }));
}

/** Counts one more failed attempt of a job, keeping `error` (cut to 2,000 characters); returns the new total (0 when the job does not exist). */
export async function recordJobAttempt(em: Em, brandId: string, jobId: string, error: string, at: Date): Promise<number> {
  const row = await first(em, (db) =>
    db
      .updateTable('mint_jobs')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error.slice(0, 2000), updated_at: at }))
      .where('brand_id', '=', brandId)
      .where('id', '=', jobId)
      .returning('attempts'),
  );
  return row?.attempts ?? 0;
}

/** Mint jobs per status over all brands; statuses without jobs are absent. */
export async function countJobsPerStatus(em: Em): Promise<Map<string, number>> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_jobs')
      .select((eb) => ['status', eb.fn.countAll().as('n')])
      .groupBy('status'),
  );
  return new Map(found.map((r) => [r.status, Number(r.n)]));
}

/** A mint job as the read side shows it, with its batch's id and minted quantity. */
export interface JobRecord {
  readonly id: string;
  readonly brandId: string;
  readonly status: JobStatus;
  /** batch or serial. */
  readonly scopeType: string;
  readonly requestedQuantity: number;
  /** The batch's minted quantity; 0 while the job has no batch. */
  readonly mintedQuantity: number;
  /** Null while the job has no batch (PREFLIGHTED). */
  readonly mintBatchId: string | null;
  /** Why the job failed, or its last transient error. */
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One job of the brand with its batch (one primary-key read joined on the batch's unique job key), or null when it does not exist there. */
/** A job's status as stored now; null when the brand has no such job. */
export async function findJobStatus(em: Em, brandId: string, jobId: string): Promise<JobStatus | null> {
  const row = await first(em, (db) => db.selectFrom('mint_jobs').select('status').where('brand_id', '=', brandId).where('id', '=', jobId));
  return row === undefined ? null : (row.status as JobStatus);
}

export async function findJobRecord(em: Em, brandId: string, jobId: string): Promise<JobRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('mint_jobs as j')
      .leftJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'j.brand_id').onRef('b.mint_job_id', '=', 'j.id'))
      .select([
        'j.id',
        'j.brand_id',
        'j.status',
        'j.scope_type',
        'j.requested_quantity',
        'j.last_error',
        'j.created_at',
        'j.updated_at',
        'b.id as mint_batch_id',
        'b.minted_quantity',
      ])
      .where('j.brand_id', '=', brandId)
      .where('j.id', '=', jobId),
  );
  if (row === undefined) return null;
  return {
    id: row.id,
    brandId: row.brand_id,
    status: row.status as JobStatus,
    scopeType: row.scope_type,
    requestedQuantity: row.requested_quantity,
    mintedQuantity: row.minted_quantity ?? 0,
    mintBatchId: row.mint_batch_id,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
