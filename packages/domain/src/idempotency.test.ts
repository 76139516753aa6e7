import { describe, expect, it } from 'vitest';
import { decideIdempotency, idempotencyKeyViolations, idempotencyRetentionMs, idempotencyStaleMs, type KeptKey } from './idempotency.ts';

const now = new Date('2026-03-01T12:00:00.000Z');
const kept = (over: Partial<KeptKey> = {}): KeptKey => ({
  route: 'POST /v1/mint/jobs',
  requestHash: 'h1',
  state: 'completed',
  createdAt: new Date(now.getTime() - 1000),
  expiresAt: new Date(now.getTime() - 1000 + idempotencyRetentionMs),
  ...over,
});
const request = { route: 'POST /v1/mint/jobs', requestHash: 'h1' };

describe('decideIdempotency', () => {
  it('replays a completed request with the same body', () => {
    expect(decideIdempotency(kept(), request, now)).toBe('replay');
  });

  it('refuses another body or another route with the same key', () => {
    expect(decideIdempotency(kept(), { ...request, requestHash: 'h2' }, now)).toBe('mismatch');
    expect(decideIdempotency(kept(), { ...request, route: 'POST /v1/other' }, now)).toBe('mismatch');
  });

  it('reports a running first request, and lets a retry take over once it is stale', () => {
    expect(decideIdempotency(kept({ state: 'in_progress' }), request, now)).toBe('in_progress');
    const old = new Date(now.getTime() - idempotencyStaleMs);
    expect(decideIdempotency(kept({ state: 'in_progress', createdAt: old }), request, now)).toBe('take_over');
    // A stale record with another body is still another request.
    expect(decideIdempotency(kept({ state: 'in_progress', createdAt: old }), { ...request, requestHash: 'h2' }, now)).toBe('mismatch');
  });

  it('forgets a key after 24 hours, whatever the body', () => {
    expect(idempotencyRetentionMs).toBe(24 * 3600 * 1000);
    expect(decideIdempotency(kept({ expiresAt: now }), { ...request, requestHash: 'h2' }, now)).toBe('take_over');
  });
});

describe('idempotencyKeyViolations', () => {
  it('needs 1 to 255 visible ASCII characters', () => {
    expect(idempotencyKeyViolations('order-42')).toEqual([]);
    expect(idempotencyKeyViolations(null)).toEqual([{ field: 'Idempotency-Key', message: 'is required' }]);
    expect(idempotencyKeyViolations('has space')[0]?.message).toMatch(/visible ASCII/);
    expect(idempotencyKeyViolations('k'.repeat(256))).toHaveLength(1);
  });
});
