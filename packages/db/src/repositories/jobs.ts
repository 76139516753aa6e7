import { isTerminalJobStatus, type JobMove, type JobStatus, type Lease, type LeaseState } from '@mint/domain';
import type { Em } from '../orm.ts';
import { query, run } from './sql.ts';

/**
 * Applies a job move as a compare-and-set: the row changes only if it still has `move.from`.
 * Returns false when the race was lost (the caller decides whether that is a conflict).
 * Reaching a terminal status stamps finished_at and releases the lease.
 */
export async function moveJob(em: Em, brandId: string, jobId: string, move: JobMove, at: Date, lastError: string | null = null): Promise<boolean> {
  const terminal = isTerminalJobStatus(move.to);
  const changed = await run(
    em,
    `update mint_jobs set status = ?, updated_at = ?,
       finished_at = case when ? then ?::timestamptz else finished_at end,
       lease_owner = case when ? then null else lease_owner end,
       lease_expires_at = case when ? then null else lease_expires_at end,
       last_error = coalesce(?, last_error)
     where brand_id = ? and id = ? and status = ?`,
    [move.to, at, terminal, at, terminal, terminal, lastError, brandId, jobId, move.from],
  );
  return changed === 1;
}

/** The lease columns of a job, as the domain's claim rules read them; null when the job does not exist. */
export async function readJobLease(em: Em, brandId: string, jobId: string): Promise<LeaseState | null> {
  const [row] = await query<{ status: JobStatus; lease_owner: string | null; lease_expires_at: Date | null; lease_token: number }>(
    em,
    `select status, lease_owner, lease_expires_at, lease_token from mint_jobs where brand_id = ? and id = ?`,
    [brandId, jobId],
  );
  if (!row) return null;
  return {
    status: row.status, owner: row.lease_owner, token: row.lease_token,
    expiresAt: row.lease_expires_at === null ? null : new Date(row.lease_expires_at),
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
  const [row] = await query<{ lease_token: number }>(
    em,
    `update mint_jobs set status = ?, lease_owner = ?, lease_expires_at = ?, lease_token = lease_token + 1, updated_at = ?
     where brand_id = ? and id = ? and status = ? and lease_token = ? and lease_expires_at is not distinct from ?::timestamptz
     returning lease_token`,
    [move?.to ?? seen.status, owner, expiresAt, at, brandId, jobId, move?.from ?? seen.status, seen.token, seen.expiresAt],
  );
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
  return (await run(
    em,
    `update mint_jobs set lease_expires_at = ?, updated_at = ?, attempts = 0
     where brand_id = ? and id = ? and lease_owner = ? and lease_token = ? and status in ('QUEUED', 'RESERVED', 'PROCESSING')`,
    [expiresAt, at, lease.brandId, lease.jobId, lease.owner, lease.token],
  )) === 1;
}

/** Gives a lease back so another worker can claim the job at once; false when it was no longer held. */
export async function releaseJobLease(em: Em, lease: Lease, at: Date): Promise<boolean> {
  return (await run(
    em,
    `update mint_jobs set lease_owner = null, lease_expires_at = null, updated_at = ?
     where brand_id = ? and id = ? and lease_owner = ? and lease_token = ?`,
    [at, lease.brandId, lease.jobId, lease.owner, lease.token],
  )) === 1;
}

/**
 * Jobs the sweeper hands back to the bus: QUEUED jobs nobody holds, untouched since `queuedBefore`,
 * and RESERVED or PROCESSING jobs whose lease is gone or lapsed at `now`, oldest first.
 */
export async function findJobsToSweep(em: Em, now: Date, queuedBefore: Date, limit: number): Promise<{ id: string; brandId: string }[]> {
  const rows = await query<{ id: string; brand_id: string }>(
    em,
    `select id, brand_id from mint_jobs
     where (status = 'QUEUED' and (lease_owner is null or lease_expires_at <= ?) and updated_at < ?)
        or (status in ('RESERVED', 'PROCESSING') and (lease_owner is null or lease_expires_at <= ?) and updated_at < ?)
     order by updated_at limit ?`,
    [now, queuedBefore, now, queuedBefore, limit],
  );
  return rows.map((r) => ({ id: r.id, brandId: r.brand_id }));
}
