// The Idempotency-Key protocol of the HTTP API (IETF draft "The Idempotency-Key HTTP Header
// Field"): the first request with a key runs and its response is kept as sent; a repeat replays it,
// another body under the key is a mismatch, a repeat while the first runs is told so. What to do
// with a repeat is the domain's rule (decideIdempotency); where keys are kept is a port.

import { ConflictError, decideIdempotency, idempotencyRetentionMs, type IdempotencyState } from '@mint/domain';

/** What the first request with a key produced, and whether to keep it for repeats. */
export interface IdempotentOutcome {
  readonly status: number;
  readonly body: unknown;
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
  /** A fingerprint of the body (the same body in another key order or spacing has the same one). */
  readonly requestHash: string;
}

/** A key held by the request that claimed it (the claim's time tells one holder from the next). */
export interface HeldKey {
  readonly brandId: string;
  readonly key: string;
  readonly createdAt: Date;
}

/** A kept key as stored. */
export interface KeptKey extends HeldKey {
  readonly route: string;
  readonly requestHash: string;
  /** in_progress or completed. */
  readonly state: string;
  readonly responseStatus: number | null;
  readonly responseBody: string | null;
  readonly expiresAt: Date;
}

/** A claim of a key: the request and how long it is kept. */
export interface KeyClaim extends IdempotentRequest {
  readonly now: Date;
  readonly expiresAt: Date;
}

/** Where keys are kept: each call a compare-and-set on one key, standing alone. */
export interface IdempotencyKeys {
  /** Claims a key nobody holds; false when it is taken. */
  claim(claim: KeyClaim): Promise<boolean>;
  find(brandId: string, key: string): Promise<KeptKey | null>;
  /** Takes over an expired key, or one whose request died, if it is still as `seen`. */
  retake(seen: HeldKey, claim: KeyClaim): Promise<boolean>;
  /** Keeps the response of the holder's request. */
  complete(held: HeldKey, response: SentResponse): Promise<unknown>;
  /** Lets the key go (the holder's request failed in a way a retry may fix). */
  forget(held: HeldKey): Promise<unknown>;
}

/**
 * Runs `work` at most once per workspace and key while the key is kept (24 hours). The key is
 * claimed before `work` runs; the response is then stored by compare-and-set. A repeat with the
 * same body replays the stored response; another body is `mismatch`; a repeat while the first
 * runs is `in_progress`. An expired record, or one whose request died (in progress for over a
 * minute), is taken over by compare-and-set. When `work` throws, or asks not to keep its
 * response, the key is forgotten so a retry runs again.
 */
export async function runIdempotently(
  keys: IdempotencyKeys,
  clock: () => Date,
  request: IdempotentRequest,
  work: () => Promise<IdempotentOutcome>,
): Promise<IdempotentResult> {
  const { brandId, key } = request;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = clock();
    const claim = { ...request, now, expiresAt: new Date(now.getTime() + idempotencyRetentionMs) };
    let held: HeldKey | null = (await keys.claim(claim)) ? { brandId, key, createdAt: now } : null;
    if (held === null) {
      const kept = await keys.find(brandId, key);
      if (kept === null) continue;
      const decision = decideIdempotency({ ...kept, state: kept.state as IdempotencyState }, request, now);
      if (decision === 'mismatch') return { kind: 'mismatch' };
      if (decision === 'in_progress') return { kind: 'in_progress' };
      if (decision === 'replay') return { kind: 'replayed', response: { status: kept.responseStatus ?? 200, text: kept.responseBody ?? 'null' } };
      if (!(await keys.retake(kept, claim))) continue;
      held = { brandId, key, createdAt: now };
    }
    let outcome: IdempotentOutcome;
    try {
      outcome = await work();
    } catch (error) {
      await keys.forget(held).catch(() => undefined);
      throw error;
    }
    const response = { status: outcome.status, text: JSON.stringify(outcome.body) };
    if (outcome.keep) await keys.complete(held, response);
    else await keys.forget(held);
    return { kind: 'ran', response };
  }
  throw new ConflictError(`Idempotency-Key ${JSON.stringify(key)} is being claimed concurrently; retry`);
}
