/** Default units per processing invocation (the spec's _max_units default). */
export const defaultChunkSize = 2000;
/** Units in the synchronous kick of submit + kick. */
export const kickUnitLimit = 20_000;

/** A contiguous range of unit sequence numbers to insert in one transaction. */
export interface Chunk {
  /** First sequence number (1-based). */
  readonly firstSeq: number;
  /** Units in the chunk; 0 when the job is complete. */
  readonly count: number;
}
