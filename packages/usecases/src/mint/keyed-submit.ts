import { assertValid, idempotencyKeyViolations, validateMintRequest, type MintRequest } from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { keyDerivedUuid, requestFingerprint } from '../idempotency.ts';
import { submitValid, type SubmitResult } from './submit.ts';

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

/** A checked keyed mint request: what its key is kept under, and the submit to run once. */
export interface KeyedSubmit {
  readonly key: { readonly brandId: string; readonly key: string; readonly route: string; readonly requestHash: string };
  readonly submit: () => Promise<SubmitResult>;
}

/**
 * Checks a mint request that came with an Idempotency-Key (the key, then the request's rules,
 * before the key is claimed) and gives the submit to run at most once under it. Submit's own
 * idempotency key is derived from the workspace, the key and the body, so a retry after the first
 * attempt died reaches the same job, and a new body after the key expired makes a new one.
 */
export function keyedSubmit(ctx: UseCaseContext, actor: Actor, keyed: KeyedMintRequest): KeyedSubmit {
  const { brandId } = keyed.request;
  assertValid(idempotencyKeyViolations(keyed.key));
  const key = keyed.key!;
  const requestHash = requestFingerprint(keyed.body);
  const request: MintRequest = { ...keyed.request, idempotencyKey: keyDerivedUuid(brandId, `${key}\n${requestHash}`) };
  validateMintRequest(request);
  return { key: { brandId, key, route: keyed.route, requestHash }, submit: () => submitValid(ctx, actor, request) };
}
