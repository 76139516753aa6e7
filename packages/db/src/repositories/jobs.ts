import { isTerminalJobStatus, type JobMove } from '@mint/domain';
import type { Em } from '../orm.ts';
import { run } from './sql.ts';

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
