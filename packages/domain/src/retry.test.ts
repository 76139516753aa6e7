import { describe, expect, it } from 'vitest';
import { attemptsExhausted, busPullRetry, packRetry, retryDelayMs, type RetryPolicy } from './retry.ts';

describe('retryDelayMs', () => {
  it('doubles from the base up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(packRetry, n, 0.3))).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => retryDelayMs(busPullRetry, n, 0.9))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('draws the jittered share from the random number', () => {
    const half: RetryPolicy = { baseMs: 1000, capMs: 10_000, jitter: 0.5, maxAttempts: 3 };
    expect([0, 0.5, 0.999_999].map((r) => retryDelayMs(half, 2, r))).toEqual([1000, 1500, 2000]);
  });
});

describe('attemptsExhausted', () => {
  it('gives up at the policy limit, never for an unlimited one', () => {
    expect([4, 5].map((n) => attemptsExhausted(packRetry, n))).toEqual([false, true]);
    expect(attemptsExhausted(busPullRetry, 1e9)).toBe(false);
  });
});
