/**
 * Planning the chunks of a job written by several writers at once. Writers commit out of order,
 * so after a crash the minted units need not be a prefix of 1..N; the plan covers exactly the
 * sequence numbers still missing, and a chunk that was already written collides on
 * (mint_batch_id, seq) instead of minting twice.
 */
import type { Chunk } from './chunk.ts';

/** An inclusive range of missing sequence numbers. */
export interface SeqRange {
  readonly first: number;
  readonly last: number;
}

/** The missing ranges of a batch whose minted units are exactly 1..minted (the usual case). */
export function missingAfterPrefix(minted: number, requested: number): SeqRange[] {
  return minted >= requested ? [] : [{ first: minted + 1, last: requested }];
}

/**
 * Up to `writers` chunks of at most `maxUnits` units each, taken in order from `missing`; fewer
 * (or none) when less is missing. Chunks never span two ranges.
 */
export function planChunks(missing: readonly SeqRange[], maxUnits: number, writers: number): Chunk[] {
  const chunks: Chunk[] = [];
  for (const range of missing) {
    for (let first = range.first; first <= range.last && chunks.length < writers; first += maxUnits) {
      chunks.push({ firstSeq: first, count: Math.min(maxUnits, range.last - first + 1) });
    }
    if (chunks.length >= writers) break;
  }
  return chunks;
}

/**
 * Units of a job's very first transaction: a submitted job's first units are committed within
 * milliseconds instead of after a whole chunk (on the 2-core target a chunk of 2,000 units takes
 * 30-40 ms to commit, one of 250 units 4-6 ms).
 */
export const firstChunkUnits = 250;

/**
 * A job's first chunk split for one writer into a lead of `firstUnits` and the rest, written one
 * after the other: the first units commit at once, and the writer still covers a whole chunk in
 * the cycle, so the cycle's writers stay balanced. A chunk no larger than the lead stays whole.
 */
export function splitLeadChunk(chunk: Chunk, firstUnits: number = firstChunkUnits): Chunk[] {
  if (chunk.count <= firstUnits) return [chunk];
  return [{ firstSeq: chunk.firstSeq, count: firstUnits }, { firstSeq: chunk.firstSeq + firstUnits, count: chunk.count - firstUnits }];
}
