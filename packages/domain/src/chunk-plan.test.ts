import { describe, expect, it } from 'vitest';
import { missingAfterPrefix, planChunks } from './chunk-plan.ts';

const counts = (chunks: { count: number }[]) => chunks.map((c) => c.count);

describe('planChunks', () => {
  it('cuts what is missing into a multiple of the writers of equal chunks, so the writers finish together', () => {
    // 10,000 units, two writers, chunks of at most 2,000: six of 1,667 (not five of 2,000, the last written alone).
    const plan = planChunks(missingAfterPrefix(0, 10_000), { maxUnits: 2000, writers: 2 });
    expect(counts(plan)).toEqual([1667, 1667, 1667, 1667, 1667, 1665]);
    expect(plan.map((c) => c.firstSeq)).toEqual([1, 1668, 3335, 5002, 6669, 8336]);
    expect(counts(planChunks(missingAfterPrefix(0, 100_000), { maxUnits: 2000, writers: 2 }))).toEqual(Array(50).fill(2000));
    expect(counts(planChunks(missingAfterPrefix(8000, 9000), { maxUnits: 2000, writers: 2 }))).toEqual([500, 500]);
    expect(counts(planChunks(missingAfterPrefix(0, 2500), { maxUnits: 1000, writers: 1 }))).toEqual([834, 834, 832]);
    expect(planChunks(missingAfterPrefix(9000, 9000), { maxUnits: 2000, writers: 2 })).toEqual([]);
  });

  it('puts a lead chunk first and shares the rest equally', () => {
    const plan = planChunks(missingAfterPrefix(0, 10_000), { maxUnits: 2000, writers: 2, leadUnits: 250 });
    expect(plan[0]).toEqual({ firstSeq: 1, count: 250 });
    expect(counts(plan.slice(1))).toEqual(Array(6).fill(1625));
    expect(plan[1]!.firstSeq).toBe(251);
    // A job no larger than the lead has no lead: it is shared like any other.
    expect(planChunks(missingAfterPrefix(0, 200), { maxUnits: 2000, writers: 1, leadUnits: 250 })).toEqual([{ firstSeq: 1, count: 200 }]);
    expect(counts(planChunks(missingAfterPrefix(0, 200), { maxUnits: 2000, writers: 2, leadUnits: 250 }))).toEqual([100, 100]);
  });

  it('plans at most the unit limit, lowest seqs first', () => {
    expect(planChunks(missingAfterPrefix(4000, 9000), { maxUnits: 2000, writers: 2, unitLimit: 4000 })).toEqual([
      { firstSeq: 4001, count: 2000 },
      { firstSeq: 6001, count: 2000 },
    ]);
    expect(planChunks(missingAfterPrefix(0, 9000), { maxUnits: 2000, writers: 1, unitLimit: 2000, leadUnits: 250 })).toEqual([
      { firstSeq: 1, count: 250 },
      { firstSeq: 251, count: 1750 },
    ]);
  });

  it('fills the gaps a crash left before going on, never spanning two ranges', () => {
    const plan = planChunks(
      [
        { first: 2001, last: 4000 },
        { first: 6001, last: 9000 },
      ],
      { maxUnits: 1500, writers: 2 },
    );
    expect(plan).toEqual([
      { firstSeq: 2001, count: 1250 },
      { firstSeq: 3251, count: 750 },
      { firstSeq: 6001, count: 1250 },
      { firstSeq: 7251, count: 1250 },
      { firstSeq: 8501, count: 500 },
    ]);
    expect(counts(plan).reduce((a, b) => a + b)).toBe(5000);
  });
});
