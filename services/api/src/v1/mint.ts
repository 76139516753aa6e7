// POST /v1/mint/submit-and-kick (the spec's submit + kick, with its own error codes) and
// POST /v1/mint/jobs (create mint job with an Idempotency-Key) and GET /v1/mint/jobs/{id} (read
// one job), with their schemas.

import { activationModes, IdempotencyKeyReusedError, identityModes, InvalidInputError, isInvalidInputError, jobStatuses, type ActivationMode, type IdentityMode, type MintRequest } from '@mint/domain';
import { header, HttpProblem, jsonType, readJsonObject, send, sendJson, type ErrorWriter, type HttpError } from '@mint/http';
import { authenticate, authorizeAuthenticated, getMintJob, submitAndKick, submitWithIdempotencyKey, type MintJobView } from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { iso, workspaceCaller, type V1Call, type V1Deps } from './context.ts';
import { errorBody } from './errors.ts';
import { arrayOf, blockingReason, boolean, componentPointer, integer, lot, nullable, obj, oneOfEnum, ref, string, time, uuid, type Schema } from './schemas.ts';

const mintJobFields = {
  product_id: uuid,
  requested_quantity: { type: 'integer', description: 'Greater than 0 and at most 1,000,000.' },
  identity_mode: oneOfEnum(identityModes),
  activation_mode: oneOfEnum(activationModes),
  product_batch_id: nullable(uuid),
  lots: nullable({ ...arrayOf(lot), description: 'Batch mode only: at most 100, unique codes, quantities summing to the requested quantity.' }),
};
const mintJobRequired = ['product_id', 'requested_quantity', 'identity_mode', 'activation_mode'];

/** A mint job as get_mint_job and GET /v1/mint/jobs/{id} return it: the spec's job fields with its batch and progress. */
export const mintJobRecord: Schema = obj({
  mint_job_id: uuid, status: oneOfEnum(jobStatuses), scope_type: oneOfEnum(identityModes), requested_quantity: integer,
  minted_quantity: { ...integer, description: 'Units (or lots\' quantity) minted so far; equals requested_quantity once COMPLETED.' },
  mint_batch_id: nullable(uuid), created_at: time, updated_at: time, failure_reason: { ...nullable(string), description: 'Why the job failed; null unless FAILED.' },
});

/** A mint job in the snake_case shape of {@link mintJobRecord}. */
export function mintJobShape(j: MintJobView): Record<string, unknown> {
  return {
    mint_job_id: j.id, status: j.status, scope_type: j.scopeType, requested_quantity: j.requestedQuantity, minted_quantity: j.mintedQuantity,
    mint_batch_id: j.mintBatchId, created_at: iso(j.createdAt), updated_at: iso(j.updatedAt), failure_reason: j.failureReason,
  };
}

/** The error codes of submit + kick (the spec's own). */
const kickErrorCodes = [
  'missing_auth', 'invalid_token', 'forbidden', 'invalid_request', 'submit_failed', 'submit_blocked', 'internal_error', 'payload_too_large', 'unsupported_media_type', 'conflict',
  'idempotency_key_reused',
];

/** The component schemas of the mint routes. */
export const mintSchemas: Readonly<Record<string, Schema>> = {
  SubmitAndKickRequest: obj({ brand_id: uuid, ...mintJobFields, idempotency_key: nullable(uuid) }, ['brand_id', ...mintJobRequired]),
  SubmitAndKickResponse: {
    oneOf: [
      obj({
        ok: { const: true }, brand_id: uuid, mint_job_id: uuid, mint_batch_id: uuid, kicked: boolean, is_duplicate: boolean,
        status: oneOfEnum(jobStatuses), note: nullable(string),
      }),
      obj({
        ok: { const: false }, brand_id: { type: 'null' }, mint_job_id: { type: 'null' }, mint_batch_id: { type: 'null' }, kicked: { const: false },
        error_code: oneOfEnum(kickErrorCodes), error_message: string, blocking_reasons: arrayOf(blockingReason),
      }, ['ok', 'brand_id', 'mint_job_id', 'mint_batch_id', 'kicked', 'error_code', 'error_message']),
    ],
  },
  MintJobRequest: obj(mintJobFields, mintJobRequired),
  MintJobResponse: obj({ ok: { const: true }, data: mintJobRecord, meta: ref('Meta') }),
  MintJobCreated: obj({
    ok: { const: true },
    data: obj({ mint_job_id: uuid, mint_batch_id: uuid, status: oneOfEnum(jobStatuses), is_duplicate: boolean }),
    meta: ref('Meta'),
  }),
};
/** A mint request body as its schema admits it. */
interface MintJobBody {
  readonly product_id: string;
  readonly requested_quantity: number;
  readonly identity_mode: IdentityMode;
  readonly activation_mode: ActivationMode;
  readonly product_batch_id?: string | null;
  readonly lots?: readonly { lot_code: string; qty: number }[] | null;
}

function mintRequest(brandId: string, b: MintJobBody): Omit<MintRequest, 'idempotencyKey'> {
  return {
    brandId,
    productId: b.product_id,
    productBatchId: b.product_batch_id ?? null,
    requestedQuantity: b.requested_quantity,
    identityMode: b.identity_mode,
    activationMode: b.activation_mode,
    lots: (b.lots ?? []).map((l) => ({ lotCode: l.lot_code, qty: l.qty })),
  };
}

/** The spec's submit + kick error body: null ids, kicked=false, error_code, error_message. */
function kickError(code: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ok: false, brand_id: null, mint_job_id: null, mint_batch_id: null, kicked: false, error_code: code, error_message: message, ...extra };
}

/** Codes of the one error mapping that submit + kick names its own way. */
const kickCodeOf: Readonly<Record<string, string>> = { unauthenticated: 'invalid_token', internal: 'internal_error' };

/** Answers a submit + kick error in the spec's body. */
export const kickErrorWriter: ErrorWriter = (call, error: HttpError) => {
  sendJson(call.req, call.res, error.status, kickError(kickCodeOf[error.code] ?? error.code, error.message));
};

/**
 * POST /v1/mint/submit-and-kick: bearer token of an owner or admin; the spec's body; submits, then
 * runs one bounded cycle (at most 20,000 units). Errors use the spec's codes: missing_auth and
 * invalid_token 401, forbidden 403, invalid_request 400 (body shape), submit_failed 400 (request
 * rules), submit_blocked 200 with blocking_reasons.
 */
export async function submitAndKickRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { ctx } = deps;
  const credentials = credentialsFrom(call.req.headers);
  if (credentials.bearer === null) throw new HttpProblem(401, 'missing_auth', 'missing bearer token (Authorization: Bearer <token>)');
  // An x-api-key sent along is checked too: both credentials must grant the mint.
  const authenticated = await authenticate(ctx, credentials);
  const body = call.check<MintJobBody & { brand_id: string; idempotency_key?: string | null }>(componentPointer('SubmitAndKickRequest'), await readJsonObject(call.req));
  const caller = await authorizeAuthenticated(ctx, authenticated, body.brand_id, 'mint:write');
  let result;
  try {
    result = await submitAndKick(ctx, { id: caller.actorId }, { ...mintRequest(body.brand_id, body), idempotencyKey: body.idempotency_key ?? null });
  } catch (error) {
    if (isInvalidInputError(error)) throw new HttpProblem(400, 'submit_failed', error.message, { cause: error });
    throw error;
  }
  if (!result.submit.ok) {
    return sendJson(call.req, call.res, 200, kickError('submit_blocked', 'preflight blocked the request; see blocking_reasons', {
      blocking_reasons: result.submit.blockingReasons.map((r) => ({ code: r.code, message: r.message })),
    }));
  }
  if (!result.kicked) call.log?.warn({ err: result.kickError, mintJobId: result.submit.mintJobId }, 'kick failed; the executor will process the job');
  sendJson(call.req, call.res, 200, {
    ok: true,
    brand_id: body.brand_id,
    mint_job_id: result.submit.mintJobId,
    mint_batch_id: result.submit.mintBatchId,
    kicked: result.kicked,
    is_duplicate: result.submit.isDuplicate,
    status: result.submit.status,
    note: result.note,
  });
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
  const sent = await readJsonObject(call.req);
  const body = call.check<MintJobBody>(componentPointer('MintJobRequest'), sent);
  const keyed = { request: mintRequest(brandId, body), key, route: createMintJobRouteName, body: sent };
  const result = await submitWithIdempotencyKey(ctx, { id: caller.actorId }, keyed, (submitted) => {
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
    // The body text is the one kept: a replay answers the first answer's bytes.
    case 'ran':
      return send(call.req, call.res, result.response.status, jsonType, result.response.text);
    case 'replayed':
      return send(call.req, call.res, result.response.status, jsonType, result.response.text, { 'idempotent-replayed': 'true' });
    case 'mismatch':
      throw new IdempotencyKeyReusedError(`Idempotency-Key ${JSON.stringify(key)} was already used with a different request body`);
    case 'in_progress':
      call.res.setHeader('retry-after', '1');
      throw new HttpProblem(409, 'idempotency_request_in_progress', 'a request with this Idempotency-Key is still being processed; retry later');
  }
}

/**
 * GET /v1/mint/jobs/{id}: one job of the x-workspace-id workspace with its batch and minted
 * quantity, `{ok, data, meta}`; an id that is not a uuid is 400 naming `id`, a job that is not the
 * workspace's 404.
 */
export async function getMintJobRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { brandId } = await workspaceCaller(deps.ctx, call.req, 'mint:read');
  let job: MintJobView;
  try {
    job = await getMintJob(deps.ctx, brandId, call.params['id']!);
  } catch (error) {
    // The use case names the Connect field; this route takes the job id as the path's {id}.
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.violations.map((v) => (v.field === 'mint_job_id' ? { ...v, field: 'id' } : v)), { cause: error });
    throw error;
  }
  sendJson(call.req, call.res, 200, { ok: true, data: mintJobShape(job), meta: { request_id: call.requestId } });
}
