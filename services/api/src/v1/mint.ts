// POST /v1/mint/submit-and-kick (the spec's submit + kick, with its own error codes) and
// POST /v1/mint/jobs (create mint job with an Idempotency-Key).

import { idempotencyKeyViolations, InvalidInputError, isForbiddenError, isInvalidInputError, isUnauthenticatedError, validateMintRequest, activationModes, identityModes, type ActivationMode, type IdentityMode, type Lot, type MintRequest } from '@mint/domain';
import { keyDerivedUuid, requestFingerprint, runIdempotently, submitAndKick, submitMintRequest } from '@mint/usecases';
import { authenticate, authorizeAuthenticated, credentialsFrom } from '../auth/enforce.ts';
import { workspaceCaller, type V1Call, type V1Deps } from './context.ts';
import { errorBody, toV1Error } from './errors.ts';
import { checkFields, header, readJsonObject, sendJson, type FieldSpec, type Fields } from './http.ts';

/** Body fields of a mint request on /v1 (submit + kick adds brand_id and idempotency_key). */
export const mintJobBodySpec: Readonly<Record<string, FieldSpec>> = {
  product_id: { type: 'uuid', required: true },
  requested_quantity: { type: 'integer', required: true },
  identity_mode: { type: 'string', required: true, values: identityModes },
  activation_mode: { type: 'string', required: true, values: activationModes },
  product_batch_id: { type: 'uuid' },
  lots: { type: 'lots' },
};

/** Body fields of submit + kick. */
export const submitAndKickBodySpec: Readonly<Record<string, FieldSpec>> = {
  brand_id: { type: 'uuid', required: true },
  ...mintJobBodySpec,
  idempotency_key: { type: 'uuid' },
};

function mintRequest(brandId: string, f: Fields, idempotencyKey: string | null): MintRequest {
  return {
    brandId,
    productId: f['product_id'] as string,
    productBatchId: (f['product_batch_id'] as string | null) ?? null,
    requestedQuantity: f['requested_quantity'] as number,
    identityMode: f['identity_mode'] as IdentityMode,
    activationMode: f['activation_mode'] as ActivationMode,
    lots: (f['lots'] as Lot[] | null) ?? [],
    idempotencyKey,
  };
}

/** The spec's submit + kick error body: null ids, kicked=false, error_code, error_message. */
function kickError(call: V1Call, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  sendJson(call.res, status, {
    ok: false, brand_id: null, mint_job_id: null, mint_batch_id: null, kicked: false, error_code: code, error_message: message, ...extra,
  });
}

/**
 * POST /v1/mint/submit-and-kick: bearer token of an owner or admin; the spec's body; submits, then
 * runs one bounded cycle (at most 20,000 units). Errors use the spec's codes: missing_auth and
 * invalid_token 401, forbidden 403, invalid_request 400 (body shape), submit_failed 400 (request
 * rules), submit_blocked 200 with blocking_reasons.
 */
export async function submitAndKickRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { ctx } = deps;
  let stage: 'auth' | 'body' | 'access' | 'submit' = 'auth';
  try {
    const credentials = credentialsFrom(call.req.headers);
    if (credentials.bearer === null) return kickError(call, 401, 'missing_auth', 'missing bearer token (Authorization: Bearer <token>)');
    const authenticated = await authenticate(ctx, { bearer: credentials.bearer, apiKey: null });
    stage = 'body';
    const fields = checkFields(await readJsonObject(call.req), submitAndKickBodySpec);
    const brandId = fields['brand_id'] as string;
    stage = 'access';
    const caller = await authorizeAuthenticated(ctx, authenticated, brandId, 'mint:write');
    stage = 'submit';
    const request = mintRequest(brandId, fields, (fields['idempotency_key'] as string | null) ?? null);
    validateMintRequest(request);
    const result = await submitAndKick(ctx, { id: caller.actorId }, request);
    if (!result.submit.ok) {
      return kickError(call, 200, 'submit_blocked', 'preflight blocked the request; see blocking_reasons', {
        blocking_reasons: result.submit.blockingReasons.map((r) => ({ code: r.code, message: r.message })),
      });
    }
    if (!result.kicked) call.log?.warn({ err: result.kickError, mintJobId: result.submit.mintJobId }, 'kick failed; the executor will process the job');
    sendJson(call.res, 200, {
      ok: true,
      brand_id: brandId,
      mint_job_id: result.submit.mintJobId,
      mint_batch_id: result.submit.mintBatchId,
      kicked: result.kicked,
      is_duplicate: result.submit.isDuplicate,
      status: result.submit.status,
      note: result.note,
    });
  } catch (error) {
    if (isUnauthenticatedError(error)) return kickError(call, 401, 'invalid_token', error.message);
    if (isForbiddenError(error)) return kickError(call, 403, 'forbidden', error.message);
    if (isInvalidInputError(error)) return kickError(call, 400, stage === 'submit' ? 'submit_failed' : 'invalid_request', error.message);
    const mapped = toV1Error(error);
    if (mapped.status === 500) call.log?.error({ err: error }, 'submit-and-kick failed');
    return kickError(call, mapped.status, mapped.status === 500 ? 'internal_error' : mapped.code, mapped.message);
  }
}

/** The route name idempotency records of create mint job are kept under. */
const createMintJobRouteName = 'POST /v1/mint/jobs';

/**
 * POST /v1/mint/jobs: creates a mint job in the x-workspace-id workspace; idempotent by the
 * required Idempotency-Key (same key and body: the first response again; other body: 422; first
 * still running: 409). 202 `{ok, data: {mint_job_id, mint_batch_id, status, is_duplicate}, meta}`;
 * a blocked request is 422 submit_blocked with the blocking reasons (kept like any response).
 */
export async function createMintJobRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { ctx } = deps;
  const { brandId, caller } = await workspaceCaller(ctx, call.req, 'mint:write');
  const key = header(call.req, 'idempotency-key');
  const keyViolations = idempotencyKeyViolations(key);
  if (keyViolations.length > 0) throw new InvalidInputError(keyViolations);
  const body = await readJsonObject(call.req);
  const fields = checkFields(body, mintJobBodySpec);
  const requestHash = requestFingerprint(body);
  // Submit's own idempotency key, derived from the workspace, the key and the body: a retry after
  // the first attempt died reaches the same job, a new body after the key expired makes a new one.
  const request = mintRequest(brandId, fields, keyDerivedUuid(brandId, `${key!}\n${requestHash}`));
  validateMintRequest(request);
  const result = await runIdempotently(ctx, { brandId, key: key!, route: createMintJobRouteName, requestHash }, async () => {
    const submitted = await submitMintRequest(ctx, { id: caller.actorId }, request);
    if (!submitted.ok) {
      const blocked = {
        status: 422, code: 'submit_blocked', message: 'preflight blocked the request; see details.blocking_reasons',
        details: { blocking_reasons: submitted.blockingReasons.map((r) => ({ code: r.code, message: r.message })) },
      };
      return { status: 422, body: errorBody(blocked, call.requestId), keep: true };
    }
    const data = { mint_job_id: submitted.mintJobId, mint_batch_id: submitted.mintBatchId, status: submitted.status, is_duplicate: submitted.isDuplicate };
    return { status: 202, body: { ok: true, data, meta: { request_id: call.requestId } }, keep: true };
  });
  switch (result.kind) {
    case 'ran':
      return sendJson(call.res, result.response.status, result.response.body);
    case 'replayed':
      return sendJson(call.res, result.response.status, result.response.body, { 'idempotent-replayed': 'true' });
    case 'mismatch':
      return sendJson(call.res, 422, errorBody({
        status: 422, code: 'idempotency_key_reused', message: 'this Idempotency-Key was already used with a different request body',
      }, call.requestId));
    case 'in_progress':
      return sendJson(call.res, 409, errorBody({
        status: 409, code: 'idempotency_request_in_progress', message: 'a request with this Idempotency-Key is still being processed; retry later',
      }, call.requestId), { 'retry-after': '1' });
  }
}
