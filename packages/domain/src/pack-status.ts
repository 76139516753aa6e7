import { IllegalStateError } from './errors.ts';

/** Status of a payload pack. */
export type PackStatus =
  /** Created with its batch's job completion; leaves when a pack worker claims it (generating). */
  | 'pending'
  /**
   * A worker holds it under a lease; leaves for ready, failed, or back to pending when the worker
   * stops or the attempt fails (then claimable again after a backoff). A lapsed lease lets another
   * worker claim it again.
   */
  | 'generating'
  /** Files written and storage_path set; its batch moved to exported. Final. */
  | 'ready'
  /** Generation gave up (batch voided, or attempts ran out). Final. */
  | 'failed';

/** All pack statuses. */
export const packStatuses: readonly PackStatus[] = ['pending', 'generating', 'ready', 'failed'];

/** A compare-and-set move of a pack. */
export interface PackMove {
  readonly from: PackStatus;
  readonly to: PackStatus;
}

const moves: Readonly<Record<PackStatus, readonly PackStatus[]>> = {
  pending: ['generating'],
  generating: ['generating', 'ready', 'failed', 'pending'],
  ready: [],
  failed: [],
};

/** The move `from -> to`, or an {@link IllegalStateError} naming both statuses. */
export function movePack(from: PackStatus, to: PackStatus): PackMove {
  if (!moves[from].includes(to)) throw new IllegalStateError(`payload pack cannot move from ${from} to ${to}`);
  return { from, to };
}

/** True when a download URL may be issued: the pack is ready and has a storage path. */
export function canDownloadPack(status: string, storagePath: string | null): boolean {
  return status === 'ready' && storagePath !== null;
}

/** Storage path of a pack inside the private store: `{brandId}/{packId}`, relative, never a URL. */
export function packStoragePath(brandId: string, packId: string): string {
  return `${brandId}/${packId}`;
}
