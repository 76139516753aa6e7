// MintService handlers: decode the request into use-case values, call the use case, encode the
// result. No rules live here; errors are thrown and mapped by the error interceptor.

import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { MintService } from '@mint/contract';
import { encodeCursor, InvalidInputError, resolveCursor, type Cursor } from '@mint/domain';
import { defaults, setOnly } from '@mint/runtime';
import type * as UseCases from '@mint/usecases';
import { actorOf, loggerKey, principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { createContainerHandlers } from './containers.ts';
import { unimplemented } from './unimplemented.ts';
import {
  activationMode,
  batchStatus,
  dateOrNull,
  decommissionReason,
  identityMode,
  serialAction,
  layoutFromWire,
  mintRequestOf,
  orNull,
  packFormat,
  symbology,
} from '@mint/wire';
import { documentFormat, toWirePack } from './wire.ts';

/** The refusal of SetMintBatchStatus while it is off, naming the setting that serves it. */
export const setMintBatchStatusDisabled =
  'SetMintBatchStatus is not enabled on this server: it is served when the API runs with ' +
  'ENABLE_SET_MINT_BATCH_STATUS=true (Helm chart value api.setMintBatchStatusEnabled=true)';

/** What the MintService handlers need. */
export interface MintServiceDeps extends HandlerDeps {
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

/**
 * The MintService implementation. CreatePayloadPackDownloadUrl answers Unimplemented until its
 * use case exists; SetMintBatchStatus unless enabled. Answers are the use cases' views, encoded
 * by {@link fromViews}.
 */
export function createMintServiceHandlers(deps: MintServiceDeps): ServiceImpl<typeof MintService> {
  const { ctx, useCases } = deps;
  const watchMaxDurationMs = deps.watch?.maxDurationMs ?? defaults.watchMaxDurationMs;
  const watchMaxStreams = deps.watch?.maxStreamsPerCaller ?? defaults.watchMaxStreamsPerCaller;
  // Open WatchMintJob streams per caller on this process.
  const openWatches = new Map<string, number>();
  return {
    ...createContainerHandlers(deps),
    ...fromViews(MintService, {
      async submitMintRequest(req, context) {
        const result = await useCases.submitMintRequest(ctx, actorOf(context), mintRequestOf(req));
        return result.ok ? { ...result, productId: req.productId, productBatchId: req.productBatchId } : result;
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
        return { ok: true, preflight: record };
      },

      async createMintBatchFromJob(req, context) {
        const result = await useCases.createMintBatchFromJob(ctx, actorOf(context), {
          brandId: req.brandId,
          mintJobId: req.mintJobId,
          activationMode: activationMode.toDomain(req.activationMode, 'activation_mode'),
          lots: req.lots.map((lot) => ({ lotCode: lot.lotCode, qty: lot.qty })),
        });
        context.values.get(loggerKey)?.().warn({ deprecation: result.deprecation }, 'deprecated RPC CreateMintBatchFromJob called');
        return { ...result, ok: true };
      },

      async processMintJobBatch(req) {
        return { ...(await useCases.processMintJobBatch(ctx, req.brandId, req.jobId, orNull(req.maxUnits))), ok: true };
      },

      async listMintBatches(req) {
        const page = await useCases.listMintBatches(ctx, req.brandId, pageRequest(req, req.cursorCreatedAt, 'cursor_created_at'));
        // product_name only in single-batch responses, as the spec says.
        return { ok: true, batches: page.items.map((view) => ({ ...view, productName: null })), ...pageResponse(page, 'nextCursorCreatedAt') };
      },

      async getMintBatch(req) {
        return { ok: true, batch: await useCases.getMintBatch(ctx, req.brandId, req.mintBatchId) };
      },

      async getMintJob(req) {
        const job = await useCases.getMintJob(ctx, req.brandId, req.mintJobId);
        return { ok: true, job: { ...job, mintJobId: job.id } };
      },

      async listMintUnits(req) {
        const page = await useCases.listMintUnits(ctx, req.brandId, {
          ...pageRequest(req, req.cursorCreatedAt, 'cursor_created_at'),
          mintBatchId: orNull(req.mintBatchId),
          serial: orNull(req.serial),
          afterSeq: orNull(req.afterSeq),
        });
        return { ok: true, units: page.items, ...pageResponse(page, 'nextCursorCreatedAt') };
      },

      async listMintEvents(req) {
        const page = await useCases.listMintEvents(ctx, req.brandId, {
          ...pageRequest(req, req.cursorOccurredAt, 'cursor_occurred_at'),
          eventType: orNull(req.eventType),
          entityType: orNull(req.entityType),
          entityId: orNull(req.entityId),
        });
        return { ok: true, events: page.items, ...pageResponse(page, 'nextCursorOccurredAt') };
      },

      async getMintKpis(req) {
        return { ...(await useCases.getMintKpis(ctx, req.brandId)), ok: true };
      },

      async listPayloadPacks(req) {
        const page = await useCases.listPayloadPacks(ctx, req.brandId, {
          ...pageRequest(req, req.cursorCreatedAt, 'cursor_created_at'),
          mintBatchId: orNull(req.mintBatchId),
        });
        return { ok: true, packs: page.items.map(toWirePack), ...pageResponse(page, 'nextCursorCreatedAt') };
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
        return { ...issued, ok: true };
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
            ...setOnly({ progress: deps.watch?.progress, safetyIntervalMs: deps.watch?.safetyIntervalMs, updateIntervalMs: deps.watch?.updateIntervalMs }),
          });
          for await (const update of updates) {
            done = update.done;
            yield update;
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
        if (deps.setMintBatchStatusEnabled !== true) throw new ConnectError(setMintBatchStatusDisabled, Code.Unimplemented);
        const view = await useCases.setMintBatchStatus(ctx, actorOf(context), {
          brandId: req.brandId,
          mintBatchId: req.mintBatchId,
          status: batchStatus.toDomain(req.status, 'status'),
          reason: orNull(req.reason),
        });
        return { ok: true, batch: view };
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
        return { ok: true, move };
      },

      async getMintBatchReconciliation(req) {
        const r = await useCases.reconcileMintBatch(ctx, req.brandId, req.mintBatchId);
        const counts = (o: Readonly<Record<string, number>>) => Object.entries(o).map(([name, count]) => ({ name, count }));
        return {
          ...r,
          ok: true,
          byState: counts(r.byState),
          byReason: counts(r.byReason),
          csv: useCases.reconciliationCsv(r),
          unallocatedByState: counts(r.unallocatedByState),
          byPartner: r.byPartner.map((p) => ({ ...p, byState: counts(p.byState), byReason: counts(p.byReason) })),
        };
      },

      async getMintBatchReconciliationDocument(req) {
        const doc = await useCases.reconciliationDocument(ctx, req.brandId, req.mintBatchId, documentFormat.toDomain(req.format, 'format'));
        return { ...doc, ok: true };
      },

      async getSerialMove(req, context) {
        const page = { pageSize: orNull(req.pageSize), pageToken: orNull(req.pageToken) };
        return { ok: true, move: await useCases.getSerialMove(ctx, req.brandId, req.moveId, principalOf(context).partnerId, page) };
      },
    }),
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
function pageResponse(page: { hasMore: boolean; next: Cursor | null }, atName: string): Record<string, unknown> {
  if (page.next === null) return { hasMore: page.hasMore };
  return { hasMore: page.hasMore, [atName]: page.next.at, nextCursorId: page.next.id, nextCursor: encodeCursor(page.next) };
}
