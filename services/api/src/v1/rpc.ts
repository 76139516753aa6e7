// POST /v1/rpc/{operation}: the spec's named operations (family A) with their underscore-prefixed
// parameters and snake_case response shapes, on the same use cases as the Connect services, so a
// client written against the original operations works unchanged. Each operation is described
// once, here: its schemas are served in /v1/openapi.json and validate its body.

import { activationModes, batchStatuses, encodeCursor, packFormats, packPurposes, papers, symbologies, zplDpis, identityModes, InvalidInputError, jobStatuses, resolveCursor, UnauthenticatedError, type ActivationMode, type Cursor, type IdentityMode, type Lot, type Permission } from '@mint/domain';
import { HttpProblem, readJsonObject, sendJson } from '@mint/http';
import * as useCases from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { dateOf, iso, type V1Call, type V1Deps } from './context.ts';
import { mintJobRecord, mintJobShape } from './mint.ts';
import { arrayOf, blockingReason, boolean, componentPointer, integer, lot, nullable, obj, oneOfEnum, string, text, time, uuid, type Schema } from './schemas.ts';

/** A batch as the use cases return it. */
type BatchRecord = Awaited<ReturnType<typeof useCases.getMintBatch>>;
/** A request body that passed its operation's schema. */
type Params = Readonly<Record<string, unknown>>;

/** A named operation: its description (summary and schemas), the permission it needs, and what it runs. */
interface NamedOperation {
  readonly summary: string;
  readonly request: Schema;
  readonly response: Schema;
  readonly permission: Permission;
  /** Largest body of the operation, in bytes; default the 1 MiB of every JSON route. */
  readonly maxBodyBytes?: number;
  run(ctx: useCases.UseCaseContext, p: Params, actor: useCases.Actor, deps: V1Deps): Promise<Record<string, unknown>>;
}

const str = (p: Params, name: string) => (p[name] as string | null | undefined) ?? null;
const int = (p: Params, name: string) => (p[name] as number | null | undefined) ?? null;
const lotsOf = (p: Params): Lot[] => ((p['_lots'] as { lot_code: string; qty: number }[] | null | undefined) ?? []).map((l) => ({ lotCode: l.lot_code, qty: l.qty }));

/** The keyset cursor of a named list operation (`_cursor_<at>` and `_cursor_id`, both or neither). */
function cursorOf(p: Params, atParam: string): Cursor | null {
  return resolveCursor({ at: dateOf(str(p, atParam)), id: str(p, '_cursor_id'), atField: atParam, idField: '_cursor_id' });
}

const batchRecord = (withName: boolean): Schema => obj({
  id: uuid, status: oneOfEnum(batchStatuses), identity_mode: oneOfEnum(identityModes), activation_mode: oneOfEnum(activationModes),
  requested_quantity: integer, minted_quantity: integer, resolver_base_url: string, created_at: time,
  product_id: uuid, ...(withName ? { product_name: nullable(string) } : {}), product_sku: nullable(string),
});

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

/** Wire (snake_case) keys of a label layout and the domain's. */
const layoutKeys = {
  paper: 'paper', columns: 'columns', rows: 'rows', label_width_mm: 'labelWidthMm', label_height_mm: 'labelHeightMm',
  margin_top_mm: 'marginTopMm', margin_left_mm: 'marginLeftMm', gap_x_mm: 'gapXMm', gap_y_mm: 'gapYMm', dpi: 'dpi',
} as const;
const number: Schema = { type: 'number' };
const layoutSchema = obj({
  paper: oneOfEnum(papers), columns: integer, rows: integer, label_width_mm: number, label_height_mm: number,
  margin_top_mm: number, margin_left_mm: number, gap_x_mm: number, gap_y_mm: number, dpi: { enum: [...zplDpis] },
});
const packRecord = obj({
  id: uuid, brand_id: uuid, mint_batch_id: uuid, status: string, storage_path: nullable(string), created_at: time, updated_at: time,
  formats: arrayOf(oneOfEnum(packFormats)), seq_from: nullable(integer), seq_to: nullable(integer), symbology: oneOfEnum(symbologies),
  layout: layoutSchema, purpose: oneOfEnum(packPurposes),
});
/** A pack as the named operations return it. */
function packShape(k: Awaited<ReturnType<typeof useCases.createPayloadPack>>): Record<string, unknown> {
  const layout = useCases.packProfileOf(k.profile).layout as unknown as Readonly<Record<string, unknown>>;
  return {
    id: k.id, brand_id: k.brandId, mint_batch_id: k.mintBatchId, status: k.status, storage_path: k.storagePath,
    created_at: iso(k.createdAt), updated_at: iso(k.updatedAt), formats: k.profile.formats, seq_from: k.profile.seqFrom, seq_to: k.profile.seqTo,
    symbology: k.profile.symbology, layout: Object.fromEntries(Object.entries(layoutKeys).map(([wire, domain]) => [wire, layout[domain]])), purpose: k.purpose,
  };
}

const limit: Schema = { type: 'integer', description: '1 to 100.' };
const page = { _limit: limit, _cursor_id: uuid };
const pageResult = (at: string) => ({ has_more: boolean, [at]: nullable(time), next_cursor_id: nullable(uuid) });
const quantity: Schema = { type: 'integer', description: 'Greater than 0 and at most 1,000,000.' };
const lots = nullable({ ...arrayOf(lot), description: 'Batch mode only: at most 100, unique codes, quantities summing to the requested quantity.' });

/** One scan row of record_scan_event: types only; each row's values are checked on their own, so a bad row is refused alone. */
const scanRow = obj({
  scanned_at: { ...string, description: 'RFC 3339 time the edge answered the scan.' }, kind: { ...string, description: 'serial, lot, gtin or token.' },
  gtin: nullable(string), identifier: nullable(string), lot: nullable(string), outcome: { ...string, description: 'resolved, not_found, gone or not_activated.' },
  representation: { ...string, description: 'redirect, json, linkset or html.' }, link_type: nullable(string),
  country: nullable({ ...string, description: 'ISO 3166-1 alpha-2, from the edge\'s own trusted source.' }),
  client_class: nullable({ ...string, description: 'browser, app, bot or other.' }),
  visitor: nullable({ ...string, description: 'The edge\'s own visitor hash (16-64 base64url or hex characters), never an address.' }),
  count: nullable({ ...integer, description: 'Scans the row stands for; 1 when null.' }),
}, ['scanned_at', 'kind', 'outcome', 'representation']);

/** Every named operation of the spec, by name. */
export const namedOperations: Readonly<Record<string, NamedOperation>> = {
  submit_mint_request: {
    summary: 'Runs preflight and creates a QUEUED mint job and its draft batch (no units).',
    permission: 'mint:write',
    request: obj({
      _brand_id: uuid, _product_id: uuid, _product_batch_id: nullable(uuid), _requested_quantity: quantity,
      _identity_mode: oneOfEnum(identityModes), _activation_mode: oneOfEnum(activationModes), _lots: lots, _serials: { description: 'Reserved; refused when given.' },
      _idempotency_key: nullable(uuid),
    }, ['_brand_id', '_product_id', '_requested_quantity', '_identity_mode', '_activation_mode']),
    response: {
      oneOf: [
        obj({ ok: { const: true }, mint_job_id: uuid, mint_batch_id: uuid, status: oneOfEnum(jobStatuses), is_duplicate: boolean }),
        obj({ ok: { const: false }, blocking_reasons: arrayOf(blockingReason), product_id: uuid, product_batch_id: nullable(uuid) }),
      ],
    },
    async run(ctx, p, actor) {
      const r = await useCases.submitMintRequest(ctx, actor, {
        brandId: p['_brand_id'] as string, productId: p['_product_id'] as string, productBatchId: str(p, '_product_batch_id'),
        requestedQuantity: p['_requested_quantity'] as number, identityMode: p['_identity_mode'] as IdentityMode,
        activationMode: p['_activation_mode'] as ActivationMode, lots: lotsOf(p), idempotencyKey: str(p, '_idempotency_key'),
        ...(p['_serials'] === null || p['_serials'] === undefined ? {} : { serials: p['_serials'] }),
      });
      if (!r.ok) {
        return { ok: false, blocking_reasons: r.blockingReasons.map((b) => ({ code: b.code, message: b.message })), product_id: r.productId, product_batch_id: r.productBatchId };
      }
      return { ok: true, mint_job_id: r.mintJobId, mint_batch_id: r.mintBatchId, status: r.status, is_duplicate: r.isDuplicate };
    },
  },
  preflight_mint_batch: {
    summary: 'Standalone eligibility check; stores and returns a preflight record.',
    permission: 'mint:write',
    request: obj({ _brand_id: uuid, _product_id: uuid, _batch_id: uuid, _requested_quantity: quantity, _idempotency_key: nullable(uuid) },
      ['_brand_id', '_product_id', '_batch_id', '_requested_quantity']),
    response: obj({
      ok: { const: true }, id: uuid, status: string, preflight_result: oneOfEnum(['pass', 'blocked']), blocking_reasons: arrayOf(blockingReason),
      scope_type: oneOfEnum(identityModes), requested_quantity: integer, created_at: time, mint_job_id: nullable(uuid),
    }),
    async run(ctx, p, actor) {
      const r = await useCases.preflightMintBatch(ctx, actor, {
        brandId: p['_brand_id'] as string, productId: p['_product_id'] as string, productionBatchId: p['_batch_id'] as string,
        requestedQuantity: p['_requested_quantity'] as number, identityMode: null, idempotencyKey: str(p, '_idempotency_key'),
      });
      return {
        ok: true, id: r.id, status: r.status, preflight_result: r.preflightResult,
        blocking_reasons: r.blockingReasons.map((b) => ({ code: b.code, message: b.message })), scope_type: r.scopeType,
        requested_quantity: r.requestedQuantity, created_at: iso(r.createdAt),
        // Beyond the spec's record: the PREFLIGHTED job of a pass, for create_mint_batch_from_job.
        mint_job_id: r.mintJobId,
      };
    },
  },
  create_mint_batch_from_job: {
    summary: 'Deprecated: gives a QUEUED or PREFLIGHTED job its batch; use submit_mint_request.',
    permission: 'mint:write',
    request: obj({ _brand_id: uuid, _mint_job_id: uuid, _activation_mode: oneOfEnum(activationModes), _lots: lots }, ['_brand_id', '_mint_job_id', '_activation_mode']),
    response: obj({ ok: { const: true }, mint_job_id: uuid, mint_batch_id: uuid, status: oneOfEnum(jobStatuses), deprecation: string }),
    async run(ctx, p, actor) {
      const r = await useCases.createMintBatchFromJob(ctx, actor, {
        brandId: p['_brand_id'] as string, mintJobId: p['_mint_job_id'] as string, activationMode: p['_activation_mode'] as ActivationMode, lots: lotsOf(p),
      });
      return { ok: true, mint_job_id: r.mintJobId, mint_batch_id: r.mintBatchId, status: r.status, deprecation: r.deprecation };
    },
  },
  process_mint_job_batch: {
    summary: 'One processing cycle of a job (default 2,000 units).',
    permission: 'mint:write',
    request: obj({ _brand_id: uuid, _job_id: uuid, _max_units: integer }, ['_brand_id', '_job_id']),
    response: obj({ ok: { const: true }, done: boolean, inserted_count: integer, minted_quantity: integer, requested_quantity: integer }),
    async run(ctx, p) {
      const c = await useCases.processMintJobBatch(ctx, p['_brand_id'] as string, p['_job_id'] as string, int(p, '_max_units'));
      return { ok: true, done: c.done, inserted_count: c.insertedCount, minted_quantity: c.mintedQuantity, requested_quantity: c.requestedQuantity };
    },
  },
  list_mint_batches: {
    summary: 'The brand\'s batches, newest first.',
    permission: 'mint:read',
    request: obj({ _brand_id: uuid, ...page, _cursor_created_at: time }, ['_brand_id']),
    response: obj({ ok: { const: true }, batches: arrayOf(batchRecord(false)), ...pageResult('next_cursor_created_at'), next_cursor: nullable(string) }),
    async run(ctx, p) {
      const r = await useCases.listMintBatches(ctx, p['_brand_id'] as string, { limit: int(p, '_limit'), cursor: cursorOf(p, '_cursor_created_at') });
      return {
        ok: true, batches: r.items.map((b) => batchShape(b, false)), has_more: r.hasMore, ...nextPage(r.next, 'next_cursor_created_at'),
        next_cursor: r.next === null ? null : encodeCursor(r.next),
      };
    },
  },
  list_mint_units: {
    summary: 'The brand\'s units (optionally of one batch), newest first.',
    permission: 'mint:read',
    request: obj({ _brand_id: uuid, _mint_batch_id: nullable(uuid), ...page, _cursor_created_at: time }, ['_brand_id']),
    response: obj({
      ok: { const: true },
      units: arrayOf(obj({
        id: uuid, mint_batch_id: uuid, seq: integer, serial: string, resolver_url: string, status: oneOfEnum(['active', 'inactive']),
        gtin: nullable(string), product_sku: nullable(string), created_at: time, activated_at: nullable(time),
      })),
      ...pageResult('next_cursor_created_at'),
    }),
    async run(ctx, p) {
      const r = await useCases.listMintUnits(ctx, p['_brand_id'] as string, {
        limit: int(p, '_limit'), cursor: cursorOf(p, '_cursor_created_at'), mintBatchId: str(p, '_mint_batch_id'),
      });
      return {
        ok: true,
        units: r.items.map((u) => ({
          id: u.id, mint_batch_id: u.mintBatchId, seq: u.seq, serial: u.serial, resolver_url: u.resolverUrl, status: u.status,
          gtin: u.gtin, product_sku: u.productSku, created_at: iso(u.createdAt), activated_at: iso(u.activatedAt),
        })),
        has_more: r.hasMore, ...nextPage(r.next, 'next_cursor_created_at'),
      };
    },
  },
  list_mint_events: {
    summary: 'The brand\'s audit events, newest first, filterable.',
    permission: 'mint:read',
    request: obj({
      _brand_id: uuid, ...page, _cursor_occurred_at: time, _event_type: text, _entity_type: text, _entity_id: text,
    }, ['_brand_id']),
    response: obj({
      ok: { const: true },
      events: arrayOf(obj({
        id: uuid, occurred_at: time, event_type: string, entity_type: string, entity_id: string, payload: { type: 'object' }, actor: nullable(string),
      })),
      ...pageResult('next_cursor_occurred_at'),
    }),
    async run(ctx, p) {
      const r = await useCases.listMintEvents(ctx, p['_brand_id'] as string, {
        limit: int(p, '_limit'), cursor: cursorOf(p, '_cursor_occurred_at'),
        eventType: str(p, '_event_type'), entityType: str(p, '_entity_type'), entityId: str(p, '_entity_id'),
      });
      return {
        ok: true,
        events: r.items.map((e) => ({
          id: e.id, occurred_at: iso(e.occurredAt), event_type: e.eventType, entity_type: e.entityType, entity_id: e.entityId,
          payload: e.payload, actor: e.actor,
        })),
        has_more: r.hasMore, ...nextPage(r.next, 'next_cursor_occurred_at'),
      };
    },
  },
  get_mint_kpis: {
    summary: 'Dashboard KPIs of the brand.',
    permission: 'mint:read',
    request: obj({ _brand_id: uuid }),
    response: obj({ ok: { const: true }, total_tokens_minted: integer, active_tokens: integer, batches_created: integer, exported_printed: integer }),
    async run(ctx, p) {
      const k = await useCases.getMintKpis(ctx, p['_brand_id'] as string);
      return {
        ok: true, total_tokens_minted: k.totalTokensMinted, active_tokens: k.activeTokens, batches_created: k.batchesCreated,
        exported_printed: k.exportedPrinted,
      };
    },
  },
  get_mint_batch_by_id: {
    summary: 'One batch of the brand with its product\'s name and SKU.',
    permission: 'mint:read',
    request: obj({ _brand_id: uuid, _mint_batch_id: uuid }),
    response: obj({ ok: { const: true }, batch: batchRecord(true) }),
    async run(ctx, p) {
      return { ok: true, batch: batchShape(await useCases.getMintBatch(ctx, p['_brand_id'] as string, p['_mint_batch_id'] as string), true) };
    },
  },
  get_mint_job: {
    summary: 'One mint job of the brand with its batch and minted quantity; read it until status is COMPLETED or FAILED.',
    permission: 'mint:read',
    request: obj({ _brand_id: uuid, _mint_job_id: uuid }),
    response: obj({ ok: { const: true }, job: mintJobRecord }),
    async run(ctx, p) {
      return { ok: true, job: mintJobShape(await useCases.getMintJob(ctx, p['_brand_id'] as string, p['_mint_job_id'] as string)) };
    },
  },
  list_payload_packs: {
    summary: 'The brand\'s payload packs (never signed URLs), newest first, in the spec\'s shape (ListPayloadPacks over Connect adds each pack\'s profile).',
    permission: 'mint:read',
    request: obj({ _brand_id: uuid, _mint_batch_id: nullable({ ...uuid, description: 'Only packs of this batch.' }), ...page, _cursor_created_at: time }, ['_brand_id']),
    response: obj({
      ok: { const: true },
      packs: arrayOf(obj({ id: uuid, brand_id: uuid, mint_batch_id: uuid, status: string, storage_path: nullable(string), created_at: time, updated_at: time })),
      ...pageResult('next_cursor_created_at'),
    }),
    async run(ctx, p) {
      const r = await useCases.listPayloadPacks(ctx, p['_brand_id'] as string, {
        limit: int(p, '_limit'), cursor: cursorOf(p, '_cursor_created_at'), mintBatchId: str(p, '_mint_batch_id'),
      });
      return {
        ok: true,
        packs: r.items.map((k) => ({
          id: k.id, brand_id: k.brandId, mint_batch_id: k.mintBatchId, status: k.status, storage_path: k.storagePath,
          created_at: iso(k.createdAt), updated_at: iso(k.updatedAt),
        })),
        has_more: r.hasMore, ...nextPage(r.next, 'next_cursor_created_at'),
      };
    },
  },
  create_payload_pack: {
    summary: 'Asks for a payload pack of a minted batch with its own formats, unit range (inclusive), symbology and label layout; answers it pending.',
    permission: 'mint:write',
    request: obj({
      _brand_id: uuid, _mint_batch_id: uuid,
      _formats: { ...arrayOf(oneOfEnum(packFormats)), minItems: 1, maxItems: 6, description: 'At least one; svg and pdf hold at most 100,000 units.' },
      _seq_from: nullable({ ...integer, description: 'First unit (seq), inclusive; serial batches only.' }),
      _seq_to: nullable({ ...integer, description: 'Last unit (seq), inclusive; serial batches only.' }),
      _symbology: nullable(oneOfEnum(symbologies)),
      _layout: nullable({ ...layoutSchema, required: [] }),
    }, ['_brand_id', '_mint_batch_id', '_formats']),
    response: obj({ ok: { const: true }, pack: packRecord }),
    async run(ctx, p) {
      const layout = p['_layout'] as Record<string, unknown> | null | undefined;
      const pack = await useCases.createPayloadPack(ctx, {
        brandId: p['_brand_id'] as string, mintBatchId: p['_mint_batch_id'] as string, formats: p['_formats'] as string[],
        seqFrom: int(p, '_seq_from'), seqTo: int(p, '_seq_to'), symbology: str(p, '_symbology'),
        layout: layout === null || layout === undefined ? null : Object.fromEntries(Object.entries(layoutKeys).map(([wire, domain]) => [domain, layout[wire]])),
      });
      return { ok: true, pack: packShape(pack) };
    },
  },
  record_scan_event: {
    summary: 'Records a batch of up to 10,000 scans of an edge resolver or CDN log shipper (ScanService.RecordScanEvents); idempotent per _batch_key; '
      + 'each bad row is refused with its index, field and reason, the good ones written.',
    permission: 'scans:write',
    maxBodyBytes: 16 * 1024 * 1024,
    request: obj({
      _brand_id: uuid, _batch_key: { ...string, minLength: 1, maxLength: 200 }, _scans: { ...arrayOf(scanRow), minItems: 1, maxItems: 10_000 },
    }),
    response: obj({
      ok: { const: true }, accepted: integer, rejected: arrayOf(obj({ index: integer, field: string, message: string })), replayed: boolean,
    }),
    async run(ctx, p, _actor, deps) {
      const rows = p['_scans'] as Record<string, string | number | null | undefined>[];
      const text = (row: Record<string, unknown>, name: string) => (row[name] as string | null | undefined) ?? null;
      const r = await useCases.recordScanEvents(ctx, {
        brandId: p['_brand_id'] as string, batchKey: p['_batch_key'] as string,
        scans: rows.map((row) => ({
          scannedAt: new Date(row['scanned_at'] as string), kind: row['kind'] as string, gtin: text(row, 'gtin'), identifier: text(row, 'identifier'),
          lot: text(row, 'lot'), outcome: row['outcome'] as string, representation: row['representation'] as string, linkType: text(row, 'link_type'),
          country: text(row, 'country'), clientClass: text(row, 'client_class'), visitor: text(row, 'visitor'), count: (row['count'] as number | null | undefined) ?? 1,
        })),
      }, deps.scanAlerts);
      return { ok: true, accepted: r.accepted, rejected: r.rejected.map((e) => ({ index: e.index, field: e.field, message: e.message })), replayed: r.replayed };
    },
  },
};

/** The component name of an operation's request or response schema. */
export const operationSchemaName = (name: string, part: 'request' | 'response'): string => `${name}_${part}`;

/**
 * POST /v1/rpc/{operation}: a session bearer token is required (the spec: no named operation is
 * callable without an authenticated session; an x-api-key, when also sent, must pass too), the
 * JSON body carries the operation's parameters (checked against its schema: unknown ones are
 * rejected by name), the caller's role on `_brand_id` must grant the operation, and the response
 * is the spec's shape with HTTP 200 (a blocked submit too, with ok=false).
 */
export async function namedOperationRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const name = call.params['operation']!;
  const operation = Object.hasOwn(namedOperations, name) ? namedOperations[name]! : undefined;
  if (operation === undefined) {
    throw new HttpProblem(404, 'not_found', `unknown operation "${name}"; known: ${Object.keys(namedOperations).join(', ')}`);
  }
  const credentials = credentialsFrom(call.req.headers);
  if (credentials.bearer === null) throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <token>): named operations need a session');
  const authenticated = await useCases.authenticate(deps.ctx, credentials);
  const params = call.check<Params>(componentPointer(operationSchemaName(name, 'request')), await readJsonObject(call.req, operation.maxBodyBytes));
  const caller = await useCases.authorizeAuthenticated(deps.ctx, authenticated, params['_brand_id'] as string, operation.permission);
  let body: Record<string, unknown>;
  try {
    body = await operation.run(deps.ctx, params, { id: caller.actorId }, deps);
  } catch (error) {
    // The use cases name fields as the Connect API does (limit, cursor_id); name the parameter sent.
    const known = (field: string) => Object.hasOwn((operation.request['properties'] as object), `_${field}`);
    if (error instanceof InvalidInputError && error.violations.some((v) => known(v.field))) {
      throw new InvalidInputError(error.violations.map((v) => (known(v.field) ? { ...v, field: `_${v.field}` } : v)), { cause: error });
    }
    throw error;
  }
  sendJson(call.req, call.res, 200, body);
}
