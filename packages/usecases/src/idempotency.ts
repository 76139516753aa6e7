import { createHash } from 'node:crypto';
import {
  completeIdempotencyKey,
  deleteIdempotencyKey,
  findIdempotencyKey,
  insertIdempotencyKey,
  purgeExpiredIdempotencyKeys,
  retakeIdempotencyKey,
  unitOfWork,
} from '@mint/db';
import type { UseCaseContext } from './context.ts';

/**
 * SHA-256 of a JSON value with object keys sorted, so the same body in another key order or
 * spacing counts as the same request.
 */
export function requestFingerprint(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}

/**
 * A uuid derived from a workspace's Idempotency-Key (SHA-256, formatted as a version-8 uuid), so a
 * request retried after its first attempt died reaches the same job through submit's own
 * idempotency key.
 */
export function keyDerivedUuid(brandId: string, key: string): string {
  const h = createHash('sha256').update(`${brandId}\n${key}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** A key claimed by a request. */
interface HeldKey {
  readonly brandId: string;
  readonly key: string;
  readonly createdAt: Date;
}

/** A claim of a key. */
interface KeyClaim {
  readonly brandId: string;
  readonly key: string;
  readonly route: string;
  readonly requestHash: string;
  readonly now: Date;
  readonly expiresAt: Date;
}

/**
 * The HTTP API's Idempotency-Key records (the port the HTTP layer's Idempotency-Key protocol keeps
 * its keys in), each call a statement of its own.
 */
export function idempotencyKeysOf(ctx: UseCaseContext) {
  return {
    claim: (claim: KeyClaim) => insertIdempotencyKey(unitOfWork(ctx.db), claim),
    find: (brandId: string, key: string) => findIdempotencyKey(unitOfWork(ctx.db), brandId, key),
    retake: (seen: HeldKey, claim: KeyClaim) => retakeIdempotencyKey(unitOfWork(ctx.db), seen, claim),
    complete: (held: HeldKey, response: { readonly status: number; readonly text: string }) => completeIdempotencyKey(unitOfWork(ctx.db), held, response),
    forget: (held: HeldKey) => deleteIdempotencyKey(unitOfWork(ctx.db), held),
  };
}

/** Deletes up to `limit` expired Idempotency-Key records; returns how many (for a periodic sweeper). */
export async function purgeExpiredIdempotencyRecords(ctx: UseCaseContext, limit = 1000): Promise<number> {
  return purgeExpiredIdempotencyKeys(unitOfWork(ctx.db), ctx.clock(), limit);
}
