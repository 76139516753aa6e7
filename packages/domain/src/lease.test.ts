import { describe, expect, it } from 'vitest';
import { decideClaim, isLeaseFree, leaseExpiry } from './lease.ts';

const now = new Date('2026-01-01T00:00:10Z');

describe('decideClaim', () => {
  it('claims a QUEUED job with the move to RESERVED', () => {
    expect(decideClaim({ status: 'QUEUED', owner: null, expiresAt: null, token: 0 }, now)).toEqual({ kind: 'claim', move: { from: 'QUEUED', to: 'RESERVED' } });
  });
  it('takes over a PROCESSING job whose lease expired, without a status move', () => {
    expect(decideClaim({ status: 'PROCESSING', owner: 'a', expiresAt: new Date('2026-01-01T00:00:09Z'), token: 3 }, now)).toEqual({
      kind: 'claim',
      move: null,
    });
  });
  it('leaves a live lease alone and says when it lapses', () => {
    expect(decideClaim({ status: 'PROCESSING', owner: 'a', expiresAt: new Date('2026-01-01T00:00:12Z'), token: 3 }, now)).toEqual({
      kind: 'held',
      retryInMs: 2000,
    });
  });
  it('does nothing for terminal and PREFLIGHTED jobs', () => {
    expect(decideClaim({ status: 'COMPLETED', owner: null, expiresAt: null, token: 1 }, now).kind).toBe('finished');
    expect(decideClaim({ status: 'FAILED', owner: 'a', expiresAt: new Date('2027-01-01'), token: 1 }, now).kind).toBe('finished');
    expect(decideClaim({ status: 'PREFLIGHTED', owner: null, expiresAt: null, token: 0 }, now).kind).toBe('not_ready');
  });
});

describe('lease expiry', () => {
  it('lapses exactly at now + lease', () => {
    const expiresAt = leaseExpiry(now, 1500);
    expect(isLeaseFree({ owner: 'a', expiresAt }, new Date(now.getTime() + 1499))).toBe(false);
    expect(isLeaseFree({ owner: 'a', expiresAt }, new Date(now.getTime() + 1500))).toBe(true);
    expect(isLeaseFree({ owner: null, expiresAt: null }, now)).toBe(true);
  });
});
