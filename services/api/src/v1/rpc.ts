// POST /v1/rpc/{operation}: the spec's named operations (family A) with their underscore-prefixed
// parameters and snake_case response shapes, on the same use cases as the Connect services, so a
// client written against the original operations works unchanged.

import { activationModes, encodeCursor, identityModes, InvalidInputError, resolveCursor, UnauthenticatedError, type ActivationMode, type Cursor, type IdentityMode, type Lot, type Permission } from '@mint/domain';
import * as useCases from '@mint/usecases';
import { authenticate, authorizeAuthenticated, credentialsFrom } from '../auth/enforce.ts';
import type { V1Call, V1Deps } from './context.ts';
import { HttpProblem } from './errors.ts';
import { checkFields, iso, readJsonObject, sendJson, type FieldSpec, type Fields } from './http.ts';

/** A batch as the use cases return it. */
type BatchRecord = Awaited<ReturnType<typeof useCases.getMintBatch>>;

/** A named operation: its parameters, the permission it needs, and what it runs. */
interface NamedOperation {
  readonly params: Readonly<Record<string, FieldSpec>>;
  readonly permission: Permission;
  run(ctx: useCases.UseCaseContext, f: Fields, actor: useCases.Actor): Promise<Record<string, unknown>>;
}

const brand: FieldSpec = { type: 'uuid', required: true };
const page: Readonly<Record<string, FieldSpec>> = { _limit: { type: 'integer' }, _cursor_id: { type: 'uuid' } };

const str = (f: Fields, name: string) => (f[name] as string | null) ?? null;
const int = (f: Fields, name: string) => (f[name] as number | null) ?? null;
const lots = (f: Fields) => (f['_lots'] as Lot[] | null) ?? [];

/** The keyset cursor of a named list operation (`_cursor_<at>` and `_cursor_id`, both or neither). */
function cursorOf(f: Fields, atParam: string): Cursor | null {
  return resolveCursor({ at: f[atParam] as Date | null, id: str(f, '_cursor_id'), atField: atParam, idField: '_cursor_id' });
}

/** A mint batch as the named operations return it; product_name only for get_mint_batch_by_id. */
function batchShape(b: BatchRecord, withProductName: boolean): Record<string, unknown> {
  return {
    id: b.id, status: b.status, identity_mode: b.identityMode, activation_mode: b.activationMode, requested_quantity: b.requestedQuantity,
    minted_quantity: b.mintedQuantity, resolver_base_url: b.resolverBaseUrl, created_at: iso(b.createdAt), product_id: b.productId,
    ...(withProductName ? { product_name: b.productName } : {}), product_sku: b.productSku,
  };
}

/** The next-page fields of a list: `next_cursor_<at>` and `next_cursor_id`, null on the last page. */
function nextPage(next: Cursor | null, atName: string): Record<string, unknown> {
  return { [atName]: next === null ? null : iso(next.at), next_cursor_id: next?.id ?? null };
}

/** Every named operation of the spec, by name. */
export const namedOperations: Readonly<Record<string, NamedOperation>> = {
  submit_mint_request: {
    permission: 'mint:write',
    params: {
      _brand_id: brand, _product_id: { type: 'uuid', required: true }, _product_batch_id: { type: 'uuid' },
      _requested_quantity: { type: 'integer', required: true }, _identity_mode: { type: 'string', required: true, values: identityModes },
      _activation_mode: { type: 'string', required: true, values: activationModes }, _lots: { type: 'lots' }, _serials: { type: 'any' },
      _idempotency_key: { type: 'uuid' },
    },
    async run(ctx, f, actor) {
      const r = await useCases.submitMintRequest(ctx, actor, {
        brandId: f['_brand_id'] as string, productId: f['_product_id'] as string, productBatchId: str(f, '_product_batch_id'),
        requestedQuantity: f['_requested_quantity'] as number, identityMode: f['_identity_mode'] as IdentityMode,
        activationMode: f['_activation_mode'] as ActivationMode, lots: lots(f), idempotencyKey: str(f, '_idempotency_key'),
        ...(f['_serials'] === null ? {} : { serials: f['_serials'] }),
      });
      if (!r.ok) {
        return { ok: false, blocking_reasons: r.blockingReasons.map((b) => ({ code: b.code, message: b.message })), product_id: r.productId, product_batch_id: r.productBatchId };
      }
      return { ok: true, mint_job_id: r.mintJobId, mint_batch_id: r.mintBatchId, status: r.status, is_duplicate: r.isDuplicate };
    },
  },
  preflight_mint_batch: {
    permission: 'mint:write',
    params: {
      _brand_id: brand, _product_id: { type: 'uuid', required: true }, _batch_id: { type: 'uuid', required: true },
      _requested_quantity: { type: 'integer', required: true }, _idempotency_key: { type: 'uuid' },
    },
    async run(ctx, f, actor) {
      const p = await useCases.preflightMintBatch(ctx, actor, {
        brandId: f['_brand_id'] as string, productId: f['_product_id'] as string, productionBatchId: f['_batch_id'] as string,
        requestedQuantity: f['_requested_quantity'] as number, identityMode: 'batch', idempotencyKey: str(f, '_idempotency_key'),
      });
      return {
        ok: true, id: p.id, status: p.status, preflight_result: p.preflightResult,
        blocking_reasons: p.blockingReasons.map((b) => ({ code: b.code, message: b.message })), scope_type: p.scopeType,
        requested_quantity: p.requestedQuantity, created_at: iso(p.createdAt),
        // Beyond the spec's record: the PREFLIGHTED job of a pass, for create_mint_batch_from_job.
        mint_job_id: p.mintJobId,
      };
    },
  },
  create_mint_batch_from_job: {
    permission: 'mint:write',
    params: {
      _brand_id: brand, _mint_job_id: { type: 'uuid', required: true },
      _activation_mode: { type: 'string', required: true, values: activationModes }, _lots: { type: 'lots' },
    },
    async run(ctx, f, actor) {
      const r = await useCases.createMintBatchFromJob(ctx, actor, {
        brandId: f['_brand_id'] as string, mintJobId: f['_mint_job_id'] as string, activationMode: f['_activation_mode'] as ActivationMode, lots: lots(f),
      });
      return { ok: true, mint_job_id: r.mintJobId, mint_batch_id: r.mintBatchId, status: r.status, deprecation: r.deprecation };
    },
  },
  process_mint_job_batch: {
    permission: 'mint:write',
    params: { _brand_id: brand, _job_id: { type: 'uuid', required: true }, _max_units: { type: 'integer' } },
    async run(ctx, f) {
      const c = await useCases.processMintJobBatch(ctx, f['_brand_id'] as string, f['_job_id'] as string, int(f, '_max_units'));
      return { ok: true, done: c.done, inserted_count: c.insertedCount, minted_quantity: c.mintedQuantity, requested_quantity: c.requestedQuantity };
    },
  },
  list_mint_batches: {
    permission: 'mint:read',
    params: { _brand_id: brand, ...page, _cursor_created_at: { type: 'timestamp' } },
    async run(ctx, f) {
      const p = await useCases.listMintBatches(ctx, f['_brand_id'] as string, { limit: int(f, '_limit'), cursor: cursorOf(f, '_cursor_created_at') });
      return {
        ok: true, batches: p.items.map((b) => batchShape(b, false)), has_more: p.hasMore, ...nextPage(p.next, 'next_cursor_created_at'),
        next_cursor: p.next === null ? null : encodeCursor(p.next),
      };
    },
  },
  list_mint_units: {
    permission: 'mint:read',
    params: { _brand_id: brand, _mint_batch_id: { type: 'uuid' }, ...page, _cursor_created_at: { type: 'timestamp' } },
    async run(ctx, f) {
      const p = await useCases.listMintUnits(ctx, f['_brand_id'] as string, {
        limit: int(f, '_limit'), cursor: cursorOf(f, '_cursor_created_at'), mintBatchId: str(f, '_mint_batch_id'),
      });
      return {
        ok: true,
        units: p.items.map((u) => ({
          id: u.id, mint_batch_id: u.mintBatchId, seq: u.seq, serial: u.serial, resolver_url: u.resolverUrl, status: u.status,
          gtin: u.gtin, product_sku: u.productSku, created_at: iso(u.createdAt), activated_at: iso(u.activatedAt),
        })),
        has_more: p.hasMore, ...nextPage(p.next, 'next_cursor_created_at'),
      };
    },
  },
  list_mint_events: {
    permission: 'mint:read',
    params: {
      _brand_id: brand, ...page, _cursor_occurred_at: { type: 'timestamp' }, _event_type: { type: 'string' },
      _entity_type: { type: 'string' }, _entity_id: { type: 'string' },
    },
    async run(ctx, f) {
      const p = await useCases.listMintEvents(ctx, f['_brand_id'] as string, {
        limit: int(f, '_limit'), cursor: cursorOf(f, '_cursor_occurred_at'),
        eventType: str(f, '_event_type'), entityType: str(f, '_entity_type'), entityId: str(f, '_entity_id'),
      });
      return {
        ok: true,
        events: p.items.map((e) => ({
          id: e.id, occurred_at: iso(e.occurredAt), event_type: e.eventType, entity_type: e.entityType, entity_id: e.entityId,
          payload: e.payload, actor: e.actor,
        })),
        has_more: p.hasMore, ...nextPage(p.next, 'next_cursor_occurred_at'),
      };
    },
  },
  get_mint_kpis: {
    permission: 'mint:read',
    params: { _brand_id: brand },
    async run(ctx, f) {
      const k = await useCases.getMintKpis(ctx, f['_brand_id'] as string);
      return {
        ok: true, total_tokens_minted: k.totalTokensMinted, active_tokens: k.activeTokens, batches_created: k.batchesCreated,
        exported_printed: k.exportedPrinted,
      };
    },
  },
  get_mint_batch_by_id: {
    permission: 'mint:read',
    params: { _brand_id: brand, _mint_batch_id: { type: 'uuid', required: true } },
    async run(ctx, f) {
      return { ok: true, batch: batchShape(await useCases.getMintBatch(ctx, f['_brand_id'] as string, f['_mint_batch_id'] as string), true) };
    },
  },
  list_payload_packs: {
    permission: 'mint:read',
    params: { _brand_id: brand, ...page, _cursor_created_at: { type: 'timestamp' } },
    async run(ctx, f) {
      const p = await useCases.listPayloadPacks(ctx, f['_brand_id'] as string, { limit: int(f, '_limit'), cursor: cursorOf(f, '_cursor_created_at') });
      return {
        ok: true,
        packs: p.items.map((k) => ({
          id: k.id, brand_id: k.brandId, mint_batch_id: k.mintBatchId, status: k.status, storage_path: k.storagePath,
          created_at: iso(k.createdAt), updated_at: iso(k.updatedAt),
        })),
        has_more: p.hasMore, ...nextPage(p.next, 'next_cursor_created_at'),
      };
    },
  },
};

/**
 * POST /v1/rpc/{operation}: a session bearer token is required (the spec: no named operation is
 * callable without an authenticated session; an x-api-key, when also sent, must pass too), the
 * JSON body carries the operation's parameters (unknown ones are rejected by name), the caller's
 * role on `_brand_id` must grant the operation, and the response is the spec's shape with HTTP 200
 * (a blocked submit too, with ok=false). Errors use the /v1 error body.
 */
export async function namedOperationRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const name = call.params['operation']!;
  const operation = Object.hasOwn(namedOperations, name) ? namedOperations[name]! : undefined;
  if (operation === undefined) {
    throw new HttpProblem(404, 'not_found', `unknown operation "${name}"; known: ${Object.keys(namedOperations).join(', ')}`);
  }
  const credentials = credentialsFrom(call.req.headers);
  if (credentials.bearer === null) throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <token>): named operations need a session');
  const authenticated = await authenticate(deps.ctx, credentials);
  const fields = checkFields(await readJsonObject(call.req), operation.params);
  const caller = await authorizeAuthenticated(deps.ctx, authenticated, fields['_brand_id'] as string, operation.permission);
  let body: Record<string, unknown>;
  try {
    body = await operation.run(deps.ctx, fields, { id: caller.actorId });
  } catch (error) {
    // The use cases name fields as the Connect API does (limit, cursor_id); name the parameter sent.
    if (error instanceof InvalidInputError && error.violations.some((v) => `_${v.field}` in operation.params)) {
      throw new InvalidInputError(error.violations.map((v) => (`_${v.field}` in operation.params ? { ...v, field: `_${v.field}` } : v)), { cause: error });
    }
    throw error;
  }
  sendJson(call.res, 200, body);
}
