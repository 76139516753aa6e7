import { createHash } from 'node:crypto';
import {
  completeIdempotencyKey, deleteIdempotencyKey, findIdempotencyKey, insertIdempotencyKey, purgeExpiredIdempotencyKeys, retakeIdempotencyKey,
} from '@mint/db';
import { assertValid, ConflictError, decideIdempotency, idempotencyKeyViolations, idempotencyRetentionMs, validateMintRequest, type IdempotencyState, type MintRequest } from '@mint/domain';
import type { Actor, UseCaseContext } from './context.ts';
import { submitValid, type SubmitResult } from './mint/index.ts';

/** A response to keep (or replay) for an Idempotency-Key. */
export interface KeptResponse {
  readonly status: number;
  readonly body: unknown;
}

/** What the first request with a key produced, and whether to keep it for repeats. */
export interface IdempotentOutcome extends KeptResponse {
  /** False for failures a retry may fix (server errors): the key is forgotten instead. */
  readonly keep: boolean;
}

/** A response as sent: its status and its body's JSON text, byte for byte the same on every replay. */
export interface SentResponse {
  readonly status: number;
  readonly text: string;
}

/** The result of {@link runIdempotently}. */
export type IdempotentResult =
  /** This request ran `work`; its response. */
  | { readonly kind: 'ran'; readonly response: SentResponse }
  /** An earlier request with the same key and body finished; its response as first sent. */
  | { readonly kind: 'replayed'; readonly response: SentResponse }
  /** The key was used with another body (or on another route): 422. */
  | { readonly kind: 'mismatch' }
  /** An earlier request with the key is still running: 409. */
  | { readonly kind: 'in_progress' };

/** The request an Idempotency-Key arrived with. */
export interface IdempotentRequest {
  /** Workspace the key belongs to: keys of different workspaces never meet. */
  readonly brandId: string;
  readonly key: string;
  /** e.g. `POST /v1/mint/jobs`. */
  readonly route: string;
  /** {@link requestFingerprint} of the body. */
  readonly requestHash: string;
}

/**
 * SHA-256 of a JSON value with object keys sorted, so the same body in another key order or
 * spacing counts as the same request.
 */
export function requestFingerprint(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
    }
    return v;
  };
  return createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex');
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

/**
 * Runs `work` at most once per workspace and key while the key is kept (24 hours), following the
 * IETF Idempotency-Key draft. The key is claimed with INSERT ... ON CONFLICT DO NOTHING in its own
 * transaction before `work` runs; the response is then stored by compare-and-set. A repeat with
 * the same body replays the stored response; another body is `mismatch`; a repeat while the first
 * runs is `in_progress`. An expired record, or one whose request died (in progress for over a
 * minute), is taken over by compare-and-set. When `work` throws, or asks not to keep its
 * response, the key is forgotten so a retry runs again.
 */
export async function runIdempotently(
  ctx: UseCaseContext,
  request: IdempotentRequest,
  work: () => Promise<IdempotentOutcome>,
): Promise<IdempotentResult> {
  const { brandId, key } = request;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = ctx.clock();
    const expiresAt = new Date(now.getTime() + idempotencyRetentionMs);
    const claim = { ...request, now, expiresAt };
    let held = (await insertIdempotencyKey(ctx.db.em.fork(), claim)) ? { brandId, key, createdAt: now } : null;
    if (held === null) {
      const kept = await findIdempotencyKey(ctx.db.em.fork(), brandId, key);
      if (kept === null) continue;
      const decision = decideIdempotency({ ...kept, state: kept.state as IdempotencyState }, request, now);
      if (decision === 'mismatch') return { kind: 'mismatch' };
      if (decision === 'in_progress') return { kind: 'in_progress' };
      if (decision === 'replay') return { kind: 'replayed', response: { status: kept.responseStatus ?? 200, text: kept.responseBody ?? 'null' } };
      if (!(await retakeIdempotencyKey(ctx.db.em.fork(), kept, claim))) continue;
      held = { brandId, key, createdAt: now };
    }
    let outcome: IdempotentOutcome;
    try {
      outcome = await work();
    } catch (error) {
      await deleteIdempotencyKey(ctx.db.em.fork(), held).catch(() => undefined);
      throw error;
    }
    const response = { status: outcome.status, text: JSON.stringify(outcome.body) };
    if (outcome.keep) await completeIdempotencyKey(ctx.db.em.fork(), held, response);
    else await deleteIdempotencyKey(ctx.db.em.fork(), held);
    return { kind: 'ran', response };
  }
  throw new ConflictError(`Idempotency-Key ${JSON.stringify(key)} is being claimed concurrently; retry`);
}

/** A mint request arriving with an Idempotency-Key (the /v1 create mint job). */
export interface KeyedMintRequest {
  /** The request; its own `idempotencyKey` is derived from the key and the body. */
  readonly request: Omit<MintRequest, 'idempotencyKey'>;
  /** The Idempotency-Key header (null when absent: invalid input naming it). */
  readonly key: string | null;
  /** e.g. `POST /v1/mint/jobs`. */
  readonly route: string;
  /** The body as sent, fingerprinted with {@link requestFingerprint}. */
  readonly body: unknown;
}

/**
 * Submits a mint request at most once per workspace, Idempotency-Key and body (see
 * {@link runIdempotently}); `respond` turns the submit's result into the response kept for
 * repeats. Submit's own idempotency key is derived from the workspace, the key and the body, so a
 * retry after the first attempt died reaches the same job, and a new body after the key expired
 * makes a new one. The request's rules are checked before the key is claimed.
 */
export async function submitWithIdempotencyKey(
  ctx: UseCaseContext,
  actor: Actor,
  keyed: KeyedMintRequest,
  respond: (result: SubmitResult) => IdempotentOutcome,
): Promise<IdempotentResult> {
  const { brandId } = keyed.request;
  assertValid(idempotencyKeyViolations(keyed.key));
  const key = keyed.key!;
  const requestHash = requestFingerprint(keyed.body);
  const request: MintRequest = { ...keyed.request, idempotencyKey: keyDerivedUuid(brandId, `${key}\n${requestHash}`) };
  validateMintRequest(request);
  return runIdempotently(ctx, { brandId, key, route: keyed.route, requestHash }, async () => respond(await submitValid(ctx, actor, request)));
}

/** Deletes up to `limit` expired Idempotency-Key records; returns how many (for a periodic sweeper). */
export async function purgeExpiredIdempotencyRecords(ctx: UseCaseContext, limit = 1000): Promise<number> {
  return purgeExpiredIdempotencyKeys(ctx.db.em.fork(), ctx.clock(), limit);
}
