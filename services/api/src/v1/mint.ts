// POST /v1/mint/submit-and-kick (the spec's submit + kick, with its own error codes) and
// POST /v1/mint/jobs (create mint job with an Idempotency-Key) and GET /v1/mint/jobs/{id} (read
// one job), each described once, with their schemas.

import type { Message } from '@bufbuild/protobuf';
import { MintJobSchema, MintService, SubmitMintRequestRequestSchema, type GetMintJobResponse, type SubmitMintRequestRequest } from '@mint/contract';
import { IdempotencyKeyReusedError, isDomainError, jobStatuses, type MintRequest } from '@mint/domain';
import {
  errorCodes,
  header,
  HttpProblem,
  jsonType,
  transportErrors,
  readJsonObject,
  runIdempotently,
  send,
  sendJson,
  type ErrorWriter,
  type HttpError,
} from '@mint/http';
import { authenticate, idempotencyKeysOf, keyedSubmit, submitAndKick } from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { authorizeMethod } from '../auth/permissions.ts';
import { mintRequestOf } from '@mint/wire';
import { workspaceCaller, type V1Operation } from './context.ts';
import { errorBody, okBody } from './errors.ts';
import { invokeRpc, renameViolations } from './rpc.ts';
import {
  arrayOf,
  boolean,
  componentPointer,
  fromSpecJson,
  nullable,
  obj,
  oneOfEnum,
  pick,
  ref,
  requestSchema,
  responseSchema,
  string,
  toSpecJson,
  uuid,
  wholeMessage,
  type Schema,
} from '@mint/wire';

const { submitMintRequest: submitMethod, getMintJob: getJobMethod } = MintService.method;

/** SubmitMintRequest's request fields, as the schema derived from the message describes them (types, required, limits). */
const submitFields = requestSchema(SubmitMintRequestRequestSchema);

/** The fields of a mint request in the spec's /v1 routes (the workspace, idempotency key and reserved serials come apart). */
const mintJobFields = ['product_id', 'requested_quantity', 'identity_mode', 'activation_mode', 'product_batch_id', 'lots'];

/** Codes of the one error mapping that submit + kick names its own way. */
const kickCodeOf: Readonly<Record<string, string>> = { unauthenticated: 'invalid_token', internal: 'internal_error' };

/** The error codes of submit + kick: the spec's own, and those of the one error table as it names them (a wrong method answers in the /v1 body). */
const tableCodes = [...Object.values(errorCodes), ...transportErrors].filter((e) => e.status !== 405).map((e) => kickCodeOf[e.code] ?? e.code);
const kickErrorCodes = [...new Set(['missing_auth', 'submit_failed', 'submit_blocked', ...tableCodes])];

/** The component schemas of the mint routes. */
export const mintSchemas: Readonly<Record<string, Schema>> = {
  SubmitAndKickRequest: pick(submitFields, ['brand_id', ...mintJobFields, 'idempotency_key']),
  SubmitAndKickResponse: {
    oneOf: [
      obj({
        ok: { const: true },
        brand_id: uuid,
        mint_job_id: uuid,
        mint_batch_id: uuid,
        kicked: boolean,
        is_duplicate: boolean,
        status: oneOfEnum(jobStatuses),
        note: nullable(string),
      }),
      obj(
        {
          ok: { const: false },
          brand_id: { type: 'null' },
          mint_job_id: { type: 'null' },
          mint_batch_id: { type: 'null' },
          kicked: { const: false },
          error_code: oneOfEnum(kickErrorCodes),
          error_message: string,
          blocking_reasons: arrayOf(ref('BlockingReason')),
        },
        ['ok', 'brand_id', 'mint_job_id', 'mint_batch_id', 'kicked', 'error_code', 'error_message'],
      ),
    ],
  },
  MintJobRequest: pick(submitFields, mintJobFields),
  // A mint job as GET /v1/mint/jobs/{id} returns it: the MintJob message, as get_mint_job gives it.
  MintJobResponse: obj({ ok: { const: true }, data: responseSchema(MintJobSchema, wholeMessage), meta: ref('Meta') }),
  MintJobCreated: obj({
    ok: { const: true },
    data: obj({ mint_job_id: uuid, mint_batch_id: uuid, status: oneOfEnum(jobStatuses), is_duplicate: boolean }),
    meta: ref('Meta'),
  }),
};

/** A mint request body of the spec's routes (checked by its schema): SubmitMintRequest's fields, read as that request. */
function mintRequest(body: Readonly<Record<string, unknown>>): MintRequest {
  return mintRequestOf(fromSpecJson<SubmitMintRequestRequest>(SubmitMintRequestRequestSchema, body));
}

/** The spec's submit + kick error body: null ids, kicked=false, error_code, error_message. */
function kickError(code: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ok: false, brand_id: null, mint_job_id: null, mint_batch_id: null, kicked: false, error_code: code, error_message: message, ...extra };
}

/** Answers a submit + kick error in the spec's body. */
const kickErrorWriter: ErrorWriter = (call, error: HttpError) => {
  sendJson(call.req, call.res, error.status, kickError(kickCodeOf[error.code] ?? error.code, error.message));
};

/**
 * POST /v1/mint/submit-and-kick: bearer token of an owner or admin; the spec's body; submits, then
 * runs one bounded cycle (at most 20,000 units). Errors use the spec's codes: missing_auth and
 * invalid_token 401, forbidden 403, invalid_request 400 (body shape), submit_failed 400 (request
 * rules), submit_blocked 200 with blocking_reasons.
 */
export const submitAndKickOperation: V1Operation = {
  route: 'POST /v1/mint/submit-and-kick',
  summary: 'Submit + kick: submits a mint request and runs one bounded processing cycle (at most 20,000 units).',
  security: 'bearer',
  body: 'SubmitAndKickRequest',
  responses: {
    200: ['Submitted (kicked tells whether the cycle ran), or submit_blocked with blocking_reasons', 'SubmitAndKickResponse'],
    400: ['invalid_request (body shape) or submit_failed (request rules)', 'SubmitAndKickResponse'],
    401: ['missing_auth or invalid_token', 'SubmitAndKickResponse'],
    403: ['forbidden: not owner or admin of the brand', 'SubmitAndKickResponse'],
    413: ['payload_too_large: the body exceeds the limit', 'SubmitAndKickResponse'],
    415: ['unsupported_media_type: the body is not application/json', 'SubmitAndKickResponse'],
    422: ['idempotency_key_reused: the idempotency_key already made a job from a different request', 'SubmitAndKickResponse'],
  },
  errorBody: kickErrorWriter,
  handler: async ({ ctx }, call) => {
    const credentials = credentialsFrom(call.req.headers);
    if (credentials.bearer === null) throw new HttpProblem(401, 'missing_auth', 'missing bearer token (Authorization: Bearer <token>)');
    // An x-api-key sent along is checked too: both credentials must grant the mint.
    const authenticated = await authenticate(ctx, credentials);
    const body = call.check<{ brand_id: string }>(componentPointer('SubmitAndKickRequest'), await readJsonObject(call.req));
    const caller = await authorizeMethod(ctx, authenticated, body.brand_id, submitMethod);
    let result;
    try {
      result = await submitAndKick(ctx, { id: caller.actorId }, mintRequest(body));
    } catch (error) {
      if (isDomainError(error, 'invalid')) throw new HttpProblem(400, 'submit_failed', error.message, { cause: error });
      throw error;
    }
    if (!result.submit.ok) {
      return sendJson(
        call.req,
        call.res,
        200,
        kickError('submit_blocked', 'preflight blocked the request; see blocking_reasons', {
          blocking_reasons: result.submit.blockingReasons.map((r) => ({ code: r.code, message: r.message })),
        }),
      );
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
  },
};

/**
 * POST /v1/mint/jobs: creates a mint job in the x-workspace-id workspace; idempotent by the
 * required Idempotency-Key (same key and body: the first response again; other body: 422; first
 * still running: 409). 202 `{ok, data: {mint_job_id, mint_batch_id, status, is_duplicate}, meta}`;
 * a blocked request is 422 submit_blocked with the blocking reasons (kept like any response).
 */
export const createMintJobOperation: V1Operation = {
  route: 'POST /v1/mint/jobs',
  summary: 'Creates a mint job in the workspace; idempotent by Idempotency-Key (kept 24 hours).',
  security: 'workspace',
  parameters: [
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: true,
      description: '1-255 visible ASCII characters; scoped to the workspace.',
      schema: { type: 'string', maxLength: 255 },
    },
  ],
  body: 'MintJobRequest',
  responses: { 202: ['Created (or replayed: header Idempotent-Replayed: true)', 'MintJobCreated'] },
  errors: [400, 401, 403, 409, 413, 415, 422, 500],
  handler: async ({ ctx }, call) => {
    const { brandId, caller } = await workspaceCaller(ctx, call.req, submitMethod);
    const key = header(call.req, 'idempotency-key');
    const sent = await readJsonObject(call.req);
    const body = call.check<Record<string, unknown>>(componentPointer('MintJobRequest'), sent);
    const keyed = { request: mintRequest({ ...body, brand_id: brandId }), key, route: createMintJobOperation.route, body: sent };
    const checked = keyedSubmit(ctx, { id: caller.actorId }, keyed);
    const result = await runIdempotently(idempotencyKeysOf(ctx), ctx.clock, checked.key, async () => {
      const submitted = await checked.submit();
      if (!submitted.ok) {
        const blocked = {
          status: 422,
          code: 'submit_blocked',
          message: 'preflight blocked the request; see details.blocking_reasons',
          details: { blocking_reasons: submitted.blockingReasons.map((r) => ({ code: r.code, message: r.message })) },
        };
        return { status: 422, body: errorBody(blocked, call.requestId), keep: true };
      }
      const data = { mint_job_id: submitted.mintJobId, mint_batch_id: submitted.mintBatchId, status: submitted.status, is_duplicate: submitted.isDuplicate };
      return { status: 202, body: okBody(data, call.requestId), keep: true };
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
  },
};

/**
 * GET /v1/mint/jobs/{id}: one job of the x-workspace-id workspace with its batch and minted
 * quantity, `{ok, data, meta}`; an id that is not a uuid is 400 naming `id`, a job that is not the
 * workspace's 404.
 */
export const getMintJobOperation: V1Operation = {
  route: 'GET /v1/mint/jobs/:id',
  summary: 'One mint job of the workspace with its batch and minted quantity; read it until status is COMPLETED or FAILED.',
  security: 'workspace',
  parameters: [{ name: 'id', in: 'path', required: true, description: 'The mint_job_id.', schema: uuid }],
  responses: { 200: ['The job', 'MintJobResponse'] },
  errors: [400, 401, 403, 404, 500],
  handler: async (deps, call) => {
    const { brandId, caller } = await workspaceCaller(deps.ctx, call.req, getJobMethod);
    let response: Message;
    try {
      response = await invokeRpc(
        deps.services,
        getJobMethod,
        fromSpecJson(getJobMethod.input, { brand_id: brandId, mint_job_id: call.params['id'] }),
        caller,
        call,
      );
    } catch (error) {
      // The RPC names the Connect field; this route takes the job id as the path's {id}.
      throw renameViolations(error, (field) => (field === 'mint_job_id' ? 'id' : undefined));
    }
    const { job } = toSpecJson(getJobMethod.output, response as GetMintJobResponse & Message, wholeMessage);
    sendJson(call.req, call.res, 200, okBody(job, call.requestId));
  },
};
