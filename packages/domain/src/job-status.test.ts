import { describe, expect, it } from 'vitest';
import { claimJob, completeSerialJob, completeWithoutUnits, executorMovedJobStatuses, isSettledJobStatus, jobStatuses, startProcessing } from './job-status.ts';

describe('isSettledJobStatus', () => {
  it('is true for the terminal statuses and PREFLIGHTED, which only a caller moves', () => {
    expect(jobStatuses.filter(isSettledJobStatus)).toEqual(['PREFLIGHTED', 'COMPLETED', 'FAILED']);
  });

  it('is false for every status an executor move leaves', () => {
    const executorMoves = [claimJob(), startProcessing(), completeSerialJob(), completeWithoutUnits()];
    for (const move of executorMoves) expect(isSettledJobStatus(move.from)).toBe(false);
    expect(new Set(executorMoves.map((m) => m.from))).toEqual(new Set(executorMovedJobStatuses));
  });
});
