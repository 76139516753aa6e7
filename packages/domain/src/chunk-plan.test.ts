import { describe, expect, it } from 'vitest';
import { missingAfterPrefix, planChunks, splitLeadChunk } from './chunk-plan.ts';

describe('planChunks', () => {
  it('hands consecutive chunks to the writers and stops at the requested quantity', () => {
    expect(planChunks(missingAfterPrefix(4000, 9000), 2000, 2)).toEqual([{ firstSeq: 4001, count: 2000 }, { firstSeq: 6001, count: 2000 }]);
    expect(planChunks(missingAfterPrefix(8000, 9000), 2000, 2)).toEqual([{ firstSeq: 8001, count: 1000 }]);
    expect(planChunks(missingAfterPrefix(9000, 9000), 2000, 2)).toEqual([]);
  });
  it('fills the gaps a crash left before going on, never spanning two ranges', () => {
    expect(planChunks([{ first: 2001, last: 4000 }, { first: 6001, last: 9000 }], 1500, 3)).toEqual([
      { firstSeq: 2001, count: 1500 }, { firstSeq: 3501, count: 500 }, { firstSeq: 6001, count: 1500 },
    ]);
  });
});

describe('splitLeadChunk', () => {
  it('splits a first chunk into a small lead and the rest, covering the same seqs', () => {
    expect(splitLeadChunk({ firstSeq: 1, count: 2000 }, 250)).toEqual([{ firstSeq: 1, count: 250 }, { firstSeq: 251, count: 1750 }]);
    expect(splitLeadChunk({ firstSeq: 1, count: 200 }, 250)).toEqual([{ firstSeq: 1, count: 200 }]);
  });
});
