// MintService handlers: decode the request into use-case values, call the use case, encode the
// result. No rules live here; errors are thrown and mapped by the error interceptor.

import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import type { MintService, MintBatchSchema } from '@mint/contract';
import { encodeCursor, InvalidInputError, resolveCursor, type Cursor } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { loggerKey, principalOf } from '../context.ts';
import { createContainerHandlers, type ContainerUseCases } from './containers.ts';
import { unimplemented } from './unimplemented.ts';
import {
  activationMode,
  batchStatus,
  dateOrNull,
  decommissionReason,
  documentFormat,
  identityMode,
  serialAction,
  jobStatus,
  layoutFromWire,
  mintRequestOf,
  orNull,
  orUnset,
  packFormat,
  symbology,
  toTimestamp,
  toWireMove,
  toWirePack,
  unitStatus,
} from './wire.ts';

/** The use cases MintService calls (the real module in production; stand-ins in handler tests). */
export type MintUseCases = Pick<
  typeof UseCases,
  | 'submitMintRequest'
  | 'preflightMintBatch'
  | 'createMintBatchFromJob'
  | 'processMintJobBatch'
  | 'listMintBatches'
  | 'getMintBatch'
  | 'getMintJob'
  | 'listMintUnits'
  | 'listMintEvents'
  | 'getMintKpis'
  | 'listPayloadPacks'
  | 'createPayloadPack'
  | 'createPayloadPackDownloadUrl'
  | 'watchMintJob'
  | 'setMintBatchStatus'
  | 'activateMintUnits'
  | 'moveSerials'
  | 'getSerialMove'
  | 'reconcileMintBatch'
  | 'reconciliationCsv'
  | 'reconciliationDocument'
> &
  ContainerUseCases;

/** The refusal of SetMintBatchStatus while it is off, naming the setting that serves it. */
export const setMintBatchStatusDisabled =
  'SetMintBatchStatus is not enabled on this server: it is served when the API runs with ' +
  'ENABLE_SET_MINT_BATCH_STATUS=true (Helm chart value api.setMintBatchStatusEnabled=true)';

/** What the MintService handlers need. */
export interface MintServiceDeps {
  /** The use-case context (database, clock, token settings) every call runs with. */
  readonly ctx: UseCases.UseCaseContext;
  readonly useCases: MintUseCases;
  /**
   * Serve SetMintBatchStatus (the spec's planned, unexposed set_mint_batch_status). Off by
   * default: the RPC then answers Unimplemented.
   */
  readonly setMintBatchStatusEnabled?: boolean;
  /** Signing keys and the pack store; without them CreatePayloadPackDownloadUrl answers Unimplemented. */
  readonly downloads?: UseCases.DownloadSettings;
  /** Limits of WatchMintJob streams; see {@link WatchLimits}. */
  readonly watch?: WatchLimits;
}

/** Limits and the progress source of WatchMintJob streams (`WATCH_MAX_DURATION_MS`, `WATCH_MAX_STREAMS_PER_CALLER`, `WATCH_PROGRESS`). */
export interface WatchLimits {
  /** A stream ends cleanly after this long; the client watches again. Default 15 min. */
  readonly maxDurationMs?: number;
  /** Streams one caller (its user, else its API key) may have open at once on this process; more answer ResourceExhausted. Default 20. */
  readonly maxStreamsPerCaller?: number;
  /**
   * Pushed progress (`WATCH_PROGRESS=pushed`): streams read the job once and then follow the
   * executors' published updates, reading again only every `safetyIntervalMs`. Absent: every
   * stream reads the job every 250 ms.
   */
  readonly progress?: UseCases.ProgressHub;
  /** The safety-net read's interval of pushed progress (`WATCH_SAFETY_INTERVAL_MS`); default 5 s. */
  readonly safetyIntervalMs?: number;
  /** Pushed updates reach a stream at most this often (the latest; a final status at once); default 1 s. */
  readonly updateIntervalMs?: number;
}

/** Defaults of {@link WatchLimits}. */
export const defaultWatchLimits = { maxDurationMs: 15 * 60_000, maxStreamsPerCaller: 20 } as const;

/** A batch as the use cases return it. */
type BatchView = Awaited<ReturnType<MintUseCases['getMintBatch']>>;

/**
 * The MintService implementation. CreatePayloadPackDownloadUrl answers Unimplemented until its
 * use case exists; SetMintBatchStatus unless enabled.
 */
export function createMintServiceHandlers(deps: MintServiceDeps): ServiceImpl<typeof MintService> {
  const { ctx, useCases } = deps;
  const actorOf = (context: HandlerContext) => {
    const principal = principalOf(context);
    return { id: principal.actorId, partnerId: principal.partnerId };
  };
  const watchMaxDurationMs = deps.watch?.maxDurationMs ?? defaultWatchLimits.maxDurationMs;
  const watchMaxStreams = deps.watch?.maxStreamsPerCaller ?? defaultWatchLimits.maxStreamsPerCaller;
  // Open WatchMintJob streams per caller on this process.
  const openWatches = new Map<string, number>();
  return {
    ...createContainerHandlers(deps),
    async submitMintRequest(req, context) {
      const result = await useCases.submitMintRequest(ctx, actorOf(context), mintRequestOf(req));
      if (result.ok) {
        return {
          ok: true,
          mintJobId: result.mintJobId,
          mintBatchId: result.mintBatchId,
          status: jobStatus.toWire(result.status),
          isDuplicate: result.isDuplicate,
          productId: req.productId,
          productBatchId: req.productBatchId,
        };
      }
      return {
        ok: false,
        blockingReasons: result.blockingReasons.map((r) => ({ code: r.code, message: r.message })),
        productId: result.productId,
        productBatchId: orUnset(result.productBatchId),
      };
    },

    async preflightMintBatch(req, context) {
      const record = await useCases.preflightMintBatch(ctx, actorOf(context), {
        brandId: req.brandId,
        productId: req.productId,
        productionBatchId: req.batchId,
        requestedQuantity: req.requestedQuantity,
        identityMode: req.identityMode === undefined ? null : identityMode.toDomain(req.identityMode, 'identity_mode'),
        idempotencyKey: orNull(req.idempotencyKey),
      });
      return {
        ok: true,
        preflight: {
          id: record.id,
          status: record.status,
          preflightResult: record.preflightResult,
          blockingReasons: record.blockingReasons.map((r) => ({ code: r.code, message: r.message })),
          scopeType: record.scopeType,
          requestedQuantity: record.requestedQuantity,
          createdAt: toTimestamp(record.createdAt),
          mintJobId: orUnset(record.mintJobId),
        },
      };
    },

    async createMintBatchFromJob(req, context) {
      const result = await useCases.createMintBatchFromJob(ctx, actorOf(context), {
        brandId: req.brandId,
        mintJobId: req.mintJobId,
        activationMode: activationMode.toDomain(req.activationMode, 'activation_mode'),
        lots: req.lots.map((lot) => ({ lotCode: lot.lotCode, qty: lot.qty })),
      });
      context.values.get(loggerKey)?.().warn({ deprecation: result.deprecation }, 'deprecated RPC CreateMintBatchFromJob called');
      return {
        ok: true,
        mintJobId: result.mintJobId,
        mintBatchId: result.mintBatchId,
        status: jobStatus.toWire(result.status),
        deprecation: result.deprecation,
      };
    },

    async processMintJobBatch(req) {
      const cycle = await useCases.processMintJobBatch(ctx, req.brandId, req.jobId, orNull(req.maxUnits));
      return {
        ok: true,
        done: cycle.done,
        insertedCount: cycle.insertedCount,
        mintedQuantity: cycle.mintedQuantity,
        requestedQuantity: cycle.requestedQuantity,
        status: jobStatus.toWire(cycle.status),
      };
    },

    async listMintBatches(req) {
      const page = await useCases.listMintBatches(ctx, req.brandId, pageRequest(req, req.cursorCreatedAt, 'cursor_created_at'));
      return {
        ok: true,
        batches: page.items.map((view) => toWireBatch(view, false)),
        ...pageResponse(page, 'nextCursorCreatedAt'),
      };
    },

    async getMintBatch(req) {
      const view = await useCases.getMintBatch(ctx, req.brandId, req.mintBatchId);
      return { ok: true, batch: toWireBatch(view, true) };
    },

    async getMintJob(req) {
      const job = await useCases.getMintJob(ctx, req.brandId, req.mintJobId);
      return {
        ok: true,
        job: {
          mintJobId: job.id,
          status: jobStatus.toWire(job.status),
          scopeType: job.scopeType,
          requestedQuantity: job.requestedQuantity,
          mintedQuantity: job.mintedQuantity,
          mintBatchId: orUnset(job.mintBatchId),
          createdAt: toTimestamp(job.createdAt),
          updatedAt: toTimestamp(job.updatedAt),
          failureReason: orUnset(job.failureReason),
        },
      };
    },

    async listMintUnits(req) {
      const page = await useCases.listMintUnits(ctx, req.brandId, {
        ...pageRequest(req, req.cursorCreatedAt, 'cursor_created_at'),
        mintBatchId: orNull(req.mintBatchId),
        serial: orNull(req.serial),
        afterSeq: orNull(req.afterSeq),
      });
      return {
        ok: true,
        units: page.items.map((unit) => ({
          id: unit.id,
          mintBatchId: unit.mintBatchId,
          seq: unit.seq,
          serial: unit.serial,
          resolverUrl: unit.resolverUrl,
          status: unitStatus.toWire(unit.status),
          createdAt: toTimestamp(unit.createdAt),
          activatedAt: unit.activatedAt === null ? undefined : toTimestamp(unit.activatedAt),
          productSku: orUnset(unit.productSku),
          gtin: orUnset(unit.gtin),
        })),
        ...pageResponse(page, 'nextCursorCreatedAt'),
      };
    },

    async listMintEvents(req) {
      const page = await useCases.listMintEvents(ctx, req.brandId, {
        ...pageRequest(req, req.cursorOccurredAt, 'cursor_occurred_at'),
        eventType: orNull(req.eventType),
        entityType: orNull(req.entityType),
        entityId: orNull(req.entityId),
      });
      return {
        ok: true,
        events: page.items.map((event) => ({
          id: event.id,
          occurredAt: toTimestamp(event.occurredAt),
          eventType: event.eventType,
          entityType: event.entityType,
          entityId: event.entityId,
          // A jsonb column: JSON by construction.
          payload: event.payload as JsonObject,
          actor: orUnset(event.actor),
        })),
        ...pageResponse(page, 'nextCursorOccurredAt'),
      };
    },

    async getMintKpis(req) {
      const kpis = await useCases.getMintKpis(ctx, req.brandId);
      return {
        ok: true,
        totalTokensMinted: BigInt(kpis.totalTokensMinted),
        activeTokens: BigInt(kpis.activeTokens),
        batchesCreated: BigInt(kpis.batchesCreated),
        exportedPrinted: BigInt(kpis.exportedPrinted),
      };
    },

    async listPayloadPacks(req) {
      const page = await useCases.listPayloadPacks(ctx, req.brandId, {
        ...pageRequest(req, req.cursorCreatedAt, 'cursor_created_at'),
        mintBatchId: orNull(req.mintBatchId),
      });
      return {
        ok: true,
        packs: page.items.map(toWirePack),
        ...pageResponse(page, 'nextCursorCreatedAt'),
      };
    },

    async createPayloadPack(req) {
      const pack = await useCases.createPayloadPack(ctx, {
        brandId: req.brandId,
        mintBatchId: req.mintBatchId,
        formats: req.formats.map((f) => packFormat.toDomain(f, 'formats')),
        seqFrom: orNull(req.seqFrom),
        seqTo: orNull(req.seqTo),
        symbology: req.symbology === 0 ? null : symbology.toDomain(req.symbology, 'symbology'),
        layout: layoutFromWire(req.layout),
      });
      return { ok: true, pack: toWirePack(pack) };
    },

    async createPayloadPackDownloadUrl(req) {
      if (deps.downloads === undefined) return unimplemented('CreatePayloadPackDownloadUrl');
      const issued = await useCases.createPayloadPackDownloadUrl(ctx, deps.downloads, {
        brandId: req.brandId,
        packId: req.packId,
        ttlSeconds: req.ttlSeconds ?? null,
      });
      return { ok: true, url: issued.url, expiresAt: toTimestamp(issued.expiresAt) };
    },

    async *watchMintJob(req, context) {
      const caller = principalOf(context).actorId;
      const open = openWatches.get(caller) ?? 0;
      if (open >= watchMaxStreams) {
        throw new ConnectError(`too many open WatchMintJob streams (at most ${watchMaxStreams} per caller)`, Code.ResourceExhausted);
      }
      openWatches.set(caller, open + 1);
      try {
        let done = false;
        const updates = useCases.watchMintJob(ctx, req.brandId, req.mintJobId, context.signal, {
          maxDurationMs: watchMaxDurationMs,
          ...(deps.watch?.progress === undefined ? {} : { progress: deps.watch.progress }),
          ...(deps.watch?.safetyIntervalMs === undefined ? {} : { safetyIntervalMs: deps.watch.safetyIntervalMs }),
          ...(deps.watch?.updateIntervalMs === undefined ? {} : { updateIntervalMs: deps.watch.updateIntervalMs }),
        });
        for await (const update of updates) {
          done = update.done;
          yield {
            mintJobId: update.mintJobId,
            status: jobStatus.toWire(update.status),
            mintedQuantity: update.mintedQuantity,
            requestedQuantity: update.requestedQuantity,
            done: update.done,
            failureReason: orUnset(update.failureReason),
          };
        }
        // The watch stopped before the job's last message (server shutting down, client gone):
        // end with the abort's reason, e.g. Unavailable, so a client knows to watch again. A watch
        // that reached its maximum duration, or a job no executor will move, ends cleanly.
        if (!done && context.signal.aborted) throw ConnectError.from(context.signal.reason, Code.Unavailable);
      } finally {
        const left = (openWatches.get(caller) ?? 1) - 1;
        if (left === 0) openWatches.delete(caller);
        else openWatches.set(caller, left);
      }
    },

    async setMintBatchStatus(req, context) {
      if (deps.setMintBatchStatusEnabled !== true) {
        throw new ConnectError(setMintBatchStatusDisabled, Code.Unimplemented);
      }
      const view = await useCases.setMintBatchStatus(ctx, actorOf(context), {
        brandId: req.brandId,
        mintBatchId: req.mintBatchId,
        status: batchStatus.toDomain(req.status, 'status'),
        reason: orNull(req.reason),
      });
      return { ok: true, batch: toWireBatch(view, true) };
    },

    async activateMintUnits(req, context) {
      const { target } = req;
      let result;
      if (target.case === 'mintBatchId') {
        result = await useCases.activateMintUnits(ctx, actorOf(context), { brandId: req.brandId, mintBatchId: target.value });
      } else if (target.case === 'unitIds') {
        result = await useCases.activateMintUnits(ctx, actorOf(context), { brandId: req.brandId, unitIds: target.value.ids });
      } else {
        throw new ConnectError('target: exactly one of mint_batch_id or unit_ids is required', Code.InvalidArgument);
      }
      return { ok: true, activatedCount: result.activatedCount };
    },

    async moveSerials(req, context) {
      const { target } = req;
      let wireTarget: UseCases.SerialMoveTarget;
      if (target.case === 'serials') wireTarget = { serials: target.value.serials };
      else if (target.case === 'range')
        wireTarget = { mintBatchId: target.value.mintBatchId, fromSeq: orNull(target.value.fromSeq), toSeq: orNull(target.value.toSeq) };
      else if (target.case === 'container') wireTarget = { container: target.value };
      else throw new InvalidInputError([{ field: 'target', message: 'exactly one of serials, range or container is required' }]);
      const move = await useCases.moveSerials(ctx, actorOf(context), {
        brandId: req.brandId,
        action: serialAction.toDomain(req.action, 'action'),
        reason: req.reason === 0 ? null : decommissionReason.toDomain(req.reason, 'reason'),
        target: wireTarget,
        idempotencyKey: req.idempotencyKey,
      });
      return { ok: true, move: toWireMove(move) };
    },

    async getMintBatchReconciliation(req) {
      const r = await useCases.reconcileMintBatch(ctx, req.brandId, req.mintBatchId);
      const counts = (o: Readonly<Record<string, number>>) => Object.entries(o).map(([name, count]) => ({ name, count }));
      return {
        ok: true,
        requested: r.requested,
        minted: r.minted,
        notMinted: r.notMinted,
        byState: counts(r.byState),
        byReason: counts(r.byReason),
        balanced: r.balanced,
        csv: useCases.reconciliationCsv(r),
        unallocatedByState: counts(r.unallocatedByState),
        problems: [...r.problems],
        byPartner: r.byPartner.map((p) => ({
          partnerId: p.partnerId,
          partnerName: p.partnerName,
          allocated: p.allocated,
          byState: counts(p.byState),
          byReason: counts(p.byReason),
        })),
      };
    },

    async getMintBatchReconciliationDocument(req) {
      const doc = await useCases.reconciliationDocument(ctx, req.brandId, req.mintBatchId, documentFormat.toDomain(req.format, 'format'));
      return { ok: true, fileName: doc.fileName, contentType: doc.contentType, content: doc.content };
    },

    async getSerialMove(req, context) {
      const page = { pageSize: orNull(req.pageSize), pageToken: orNull(req.pageToken) };
      return { ok: true, move: toWireMove(await useCases.getSerialMove(ctx, req.brandId, req.moveId, principalOf(context).partnerId, page)) };
    },
  };
}

/**
 * The limit and position of a list request; the position from either cursor form: the opaque
 * `cursor`, or `<atField>` plus `cursor_id`. Half a pair or both forms at once is invalid input.
 */
function pageRequest(
  req: { limit?: number; cursor?: string; cursorId?: string },
  at: Timestamp | undefined,
  atField: string,
): { limit: number | null; cursor: Cursor | null } {
  return { limit: orNull(req.limit), cursor: resolveCursor({ cursor: req.cursor, at: dateOrNull(at), id: req.cursorId, atField, idField: 'cursor_id' }) };
}

/** has_more and, when there is a next page, its cursor in both forms (`<atName>` + next_cursor_id, and next_cursor). */
function pageResponse<K extends string>(
  page: { hasMore: boolean; next: Cursor | null },
  atName: K,
): { hasMore: boolean; nextCursorId?: string; nextCursor?: string } & { [P in K]?: Timestamp } {
  type Fields = { hasMore: boolean; nextCursorId?: string; nextCursor?: string } & { [P in K]?: Timestamp };
  if (page.next === null) return { hasMore: page.hasMore } as Fields;
  return { hasMore: page.hasMore, [atName]: toTimestamp(page.next.at), nextCursorId: page.next.id, nextCursor: encodeCursor(page.next) } as Fields;
}

/** A batch on the wire; product_name only in single-batch responses, as the spec says. */
function toWireBatch(view: BatchView, withProductName: boolean): MessageInitShape<typeof MintBatchSchema> {
  return {
    id: view.id,
    status: batchStatus.toWire(view.status),
    identityMode: identityMode.toWire(view.identityMode),
    activationMode: activationMode.toWire(view.activationMode),
    requestedQuantity: view.requestedQuantity,
    mintedQuantity: view.mintedQuantity,
    resolverBaseUrl: view.resolverBaseUrl,
    createdAt: toTimestamp(view.createdAt),
    updatedAt: toTimestamp(view.updatedAt),
    productId: view.productId,
    productName: withProductName ? orUnset(view.productName) : undefined,
    productSku: orUnset(view.productSku),
    mintJobId: view.mintJobId,
    productBatchId: orUnset(view.productBatchId),
    lots: view.lots.map((lot) => ({ lotCode: lot.lotCode, qty: lot.qty })),
  };
}
