import { describe, expect, it } from 'vitest';
import { batchStatuses, canMoveBatch, printedUnitsDelta, type BatchStatus } from './batch-status.ts';

describe('printedUnitsDelta', () => {
  it('adds the units when a batch reaches printed, takes them back when a printed batch is voided, and nothing else moves the KPI', () => {
    const moves = batchStatuses.flatMap((from) => batchStatuses.filter((to) => canMoveBatch(from, to)).map((to) => [from, to] as [BatchStatus, BatchStatus]));
    const deltas = Object.fromEntries(moves.map(([from, to]) => [`${from}->${to}`, printedUnitsDelta({ from, to }, 40)]));
    expect(deltas).toEqual({
      'draft->minted': 0,
      'draft->voided': 0,
      'minted->exported': 0,
      'minted->voided': 0,
      'exported->printed': 40,
      'exported->voided': 0,
      'printed->applied': 0,
      'printed->voided': -40,
    });
  });
});
