import type { Readable, Writable } from 'node:stream';

/**
 * A private object store for payload packs. A pack is a folder named by a relative storage path
 * (`{brandId}/{packId}`) holding a few files. Writes are staged and become visible at once on
 * `commit`, so a reader never sees half a pack; writing the same path again replaces it.
 */
export interface PackStore {
  /** Starts writing the pack at `storagePath`; nothing is visible until the writer commits. */
  begin(storagePath: string): Promise<PackWriter>;
  /** Opens one file of a committed pack; a {@link StoreNotFoundError} when it does not exist. */
  open(storagePath: string, file: string): Promise<StoredFile>;
  /** Deletes a committed pack; nothing happens when it does not exist. */
  remove(storagePath: string): Promise<void>;
  /**
   * Deletes what interrupted writes left behind (a process killed between writing a pack's files
   * and committing them, or between committing and deleting the pack it replaced), when last
   * written before `writtenBefore`; never a committed pack, and never a write still going on if
   * `writtenBefore` lies further back than any write takes. Safe to run from several processes at
   * once. Returns how many leftovers it deleted.
   */
  sweep(writtenBefore: Date): Promise<number>;
}

/** A pack being written. */
export interface PackWriter {
  /**
   * A writable stream for `file` (a plain name, no folders). A written chunk is the caller's again
   * once its write callback ran (or 'drain' came): the store keeps no view of it past that point,
   * so a caller may fill the same Buffer anew.
   */
  file(name: string): Writable;
  /** Makes every file visible under the storage path (replacing an earlier pack there). */
  commit(): Promise<void>;
  /** Discards what was written. Safe to call after a failed commit or twice. */
  abort(): Promise<void>;
}

/** Bytes `start..end` of a file, both inclusive (as in an HTTP `Range` header), within its size. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** A stored file opened for reading. */
export interface StoredFile {
  readonly size: number;
  /** Opens the content, or only `range` of it; each call gives a new stream. */
  stream(range?: ByteRange): Readable;
}

/** The file or pack does not exist in the store. */
export class StoreNotFoundError extends Error {
  override readonly name = 'StoreNotFoundError';
}

/** An invalid storage path or file name (absolute, `..`, a URL, odd characters). */
export class StorePathError extends Error {
  override readonly name = 'StorePathError';
}

/** True for {@link StoreNotFoundError}. */
export const isStoreNotFoundError = (e: unknown): e is StoreNotFoundError => e instanceof StoreNotFoundError;

const segment = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Checks a relative storage path: one or more `/`-separated segments of letters, digits, `.`,
 * `_` or `-`, none starting with a dot. Throws a {@link StorePathError} otherwise, so no path
 * can escape the store's root or be a URL.
 */
export function assertStoragePath(path: string): void {
  const parts = path.split('/');
  if (parts.length === 0 || parts.length > 8 || !parts.every((p) => segment.test(p))) {
    throw new StorePathError(`invalid storage path ${JSON.stringify(path)}: must be relative segments of letters, digits, ".", "_" or "-"`);
  }
}

/** Checks a file name inside a pack: one segment, as in {@link assertStoragePath}. */
export function assertFileName(name: string): void {
  if (!segment.test(name)) throw new StorePathError(`invalid file name ${JSON.stringify(name)}`);
}
