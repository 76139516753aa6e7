import { isTerminalJobStatus, type JobMove, type JobStatus, type Lease, type LeaseState } from '@mint/domain';
import type { QueryCreator } from 'kysely';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { changed, first, rows } from './kysely.ts';

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
  return db.updateTable('mint_jobs')
    .set({
      status: move.to, updated_at: at,
      ...(terminal ? { finished_at: at, lease_owner: null, lease_expires_at: null } : {}),
      ...(lastError !== null ? { last_error: lastError } : {}),
    })
    .where('brand_id', '=', brandId).where('id', '=', jobId).where('status', '=', move.from);
}

/** A job's lease as {@link readJobLease} reads it, with the job's batch for the claim's event. */
export interface JobLeaseRead {
  /** The lease columns, as the domain's claim rules read them. */
  readonly lease: LeaseState;
  /** The job's batch; null before it has one (PREFLIGHTED). */
  readonly batch: { readonly id: string; readonly identityMode: string } | null;
}

/** The lease columns of a job and its batch, in one query; null when the job does not exist. */
export async function readJobLease(em: Em, brandId: string, jobId: string): Promise<JobLeaseRead | null> {
  const row = await first(em, (db) => db.selectFrom('mint_jobs as j')
    .leftJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'j.brand_id').onRef('b.mint_job_id', '=', 'j.id'))
    .select(['j.status', 'j.lease_owner', 'j.lease_expires_at', 'j.lease_token', 'b.id as batch_id', 'b.identity_mode'])
    .where('j.brand_id', '=', brandId).where('j.id', '=', jobId));
  if (!row) return null;
  return {
    lease: {
      status: row.status as JobStatus, owner: row.lease_owner, token: row.lease_token,
      expiresAt: row.lease_expires_at === null ? null : new Date(row.lease_expires_at),
    },
    batch: row.batch_id === null || row.identity_mode === null ? null : { id: row.batch_id, identityMode: row.identity_mode },
  };
}

/**
 * Takes the lease of a job as a compare-and-set on the state the claim was decided on (status,
 * token and expiry), applying `move` when given and bumping the fencing token. Returns the new
 * token, or null when the row changed since it was read (someone else claimed or renewed).
 */
export async function claimJobLease(
  em: Em, brandId: string, jobId: string, seen: LeaseState, move: JobMove | null, owner: string, expiresAt: Date, at: Date,
): Promise<number | null> {
  const row = await first(em, (db) => db.updateTable('mint_jobs')
    .set((eb) => ({ status: move?.to ?? seen.status, lease_owner: owner, lease_expires_at: expiresAt, lease_token: eb('lease_token', '+', 1), updated_at: at }))
    .where('brand_id', '=', brandId).where('id', '=', jobId).where('status', '=', move?.from ?? seen.status).where('lease_token', '=', seen.token)
    .where((eb) => eb('lease_expires_at', 'is not distinct from', eb.cast<Date | null>(eb.val(seen.expiresAt), 'timestamptz')))
    .returning('lease_token'));
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
  return (await changed(em, (db) => db.updateTable('mint_jobs').set({ lease_expires_at: expiresAt, updated_at: at, attempts: 0 })
    .where('brand_id', '=', lease.brandId).where('id', '=', lease.jobId).where('lease_owner', '=', lease.owner).where('lease_token', '=', lease.token)
    .where('status', 'in', ['QUEUED', 'RESERVED', 'PROCESSING']))) === 1;
}

/** Gives a lease back so another worker can claim the job at once; false when it was no longer held. */
export async function releaseJobLease(em: Em, lease: Lease, at: Date): Promise<boolean> {
  return (await changed(em, (db) => db.updateTable('mint_jobs').set({ lease_owner: null, lease_expires_at: null, updated_at: at })
    .where('brand_id', '=', lease.brandId).where('id', '=', lease.jobId).where('lease_owner', '=', lease.owner).where('lease_token', '=', lease.token))) === 1;
}

/**
 * Jobs the sweeper hands back to the bus: QUEUED jobs nobody holds, untouched since `queuedBefore`,
 * and RESERVED or PROCESSING jobs whose lease is gone or lapsed at `now`, oldest first.
 */
export async function findJobsToSweep(em: Em, now: Date, queuedBefore: Date, limit: number): Promise<{ id: string; brandId: string }[]> {
  const found = await rows(em, (db) => db.selectFrom('mint_jobs').select(['id', 'brand_id'])
    .where('status', 'in', ['QUEUED', 'RESERVED', 'PROCESSING'])
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<=', now)]))
    .where('updated_at', '<', queuedBefore)
    .orderBy('updated_at').limit(limit));
  return found.map((r) => ({ id: r.id, brandId: r.brand_id }));
}

/** Counts one more failed attempt of a job, keeping `error` (cut to 2,000 characters); returns the new total (0 when the job does not exist). */
export async function recordJobAttempt(em: Em, brandId: string, jobId: string, error: string, at: Date): Promise<number> {
  const row = await first(em, (db) => db.updateTable('mint_jobs')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error.slice(0, 2000), updated_at: at }))
    .where('brand_id', '=', brandId).where('id', '=', jobId).returning('attempts'));
  return row?.attempts ?? 0;
}

/** Mint jobs per status over all brands; statuses without jobs are absent. */
export async function countJobsPerStatus(em: Em): Promise<Map<string, number>> {
  const found = await rows(em, (db) => db.selectFrom('mint_jobs').select((eb) => ['status', eb.fn.countAll().as('n')]).groupBy('status'));
  return new Map(found.map((r) => [r.status, Number(r.n)]));
}
