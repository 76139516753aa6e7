// MintService handlers: decode the request into use-case values, call the use case, encode the
// result. No rules live here; errors are thrown and mapped by the error interceptor.

import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { MintService } from '@mint/contract';
import { InvalidInputError } from '@mint/domain';
import { setOnly } from '@mint/runtime';
import type * as UseCases from '@mint/usecases';
import { actorOf, loggerKey, principalOf, type HandlerDeps } from '../context.ts';
import { fromViews, pageOf, pageRequest } from './views.ts';
import { createContainerHandlers } from './containers.ts';
import { unimplemented } from './unimplemented.ts';
import { mintRequestOf, valuesOf } from '@mint/wire';
import { packView } from './wire.ts';

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
  readonly watch: WatchLimits;
}

/** Limits and the progress source of WatchMintJob streams (`WATCH_MAX_DURATION_MS`, `WATCH_MAX_STREAMS_PER_CALLER`, `WATCH_PROGRESS`). */
export interface WatchLimits {
  /** A stream ends cleanly after this long; the client watches again. */
  readonly maxDurationMs: number;
  /** Streams one caller (its user, else its API key) may have open at once on this process; more answer ResourceExhausted. */
  readonly maxStreamsPerCaller: number;
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
  const { maxDurationMs: watchMaxDurationMs, maxStreamsPerCaller: watchMaxStreams } = deps.watch;
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
        const v = valuesOf(req);
        return { ok: true, preflight: await useCases.preflightMintBatch(ctx, actorOf(context), { ...v, productionBatchId: v.batchId }) };
      },

      async createMintBatchFromJob(req, context) {
        const result = await useCases.createMintBatchFromJob(ctx, actorOf(context), valuesOf(req));
        context.values.get(loggerKey)?.().warn({ deprecation: result.deprecation }, 'deprecated RPC CreateMintBatchFromJob called');
        return { ...result, ok: true };
      },

      async processMintJobBatch(req) {
        return { ...(await useCases.processMintJobBatch(ctx, req.brandId, req.jobId, valuesOf(req).maxUnits)), ok: true };
      },

      async listMintBatches(req) {
        const v = valuesOf(req);
        const page = await useCases.listMintBatches(ctx, req.brandId, pageRequest(v, v.cursorCreatedAt, 'cursor_created_at'));
        // product_name only in single-batch responses, as the spec says.
        return { ok: true, batches: page.items.map((view) => ({ ...view, productName: null })), ...pageOf(page, 'nextCursorCreatedAt') };
      },

      async getMintBatch(req) {
        return { ok: true, batch: await useCases.getMintBatch(ctx, req.brandId, req.mintBatchId) };
      },

      async getMintJob(req) {
        const job = await useCases.getMintJob(ctx, req.brandId, req.mintJobId);
        return { ok: true, job: { ...job, mintJobId: job.id } };
      },

      async listMintUnits(req) {
        const v = valuesOf(req);
        const page = await useCases.listMintUnits(ctx, req.brandId, { ...v, ...pageRequest(v, v.cursorCreatedAt, 'cursor_created_at') });
        return { ok: true, units: page.items, ...pageOf(page, 'nextCursorCreatedAt') };
      },

      async listMintEvents(req) {
        const v = valuesOf(req);
        const page = await useCases.listMintEvents(ctx, req.brandId, { ...v, ...pageRequest(v, v.cursorOccurredAt, 'cursor_occurred_at') });
        return { ok: true, events: page.items, ...pageOf(page, 'nextCursorOccurredAt') };
      },

      async getMintKpis(req) {
        return { ...(await useCases.getMintKpis(ctx, req.brandId)), ok: true };
      },

      async listPayloadPacks(req) {
        const v = valuesOf(req);
        const page = await useCases.listPayloadPacks(ctx, req.brandId, { ...v, ...pageRequest(v, v.cursorCreatedAt, 'cursor_created_at') });
        return { ok: true, packs: page.items.map(packView), ...pageOf(page, 'nextCursorCreatedAt') };
      },

      async createPayloadPack(req) {
        return { ok: true, pack: packView(await useCases.createPayloadPack(ctx, valuesOf(req))) };
      },

      async createPayloadPackDownloadUrl(req) {
        if (deps.downloads === undefined) return unimplemented('CreatePayloadPackDownloadUrl');
        return { ...(await useCases.createPayloadPackDownloadUrl(ctx, deps.downloads, valuesOf(req))), ok: true };
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
            ...setOnly({ progress: deps.watch.progress, safetyIntervalMs: deps.watch.safetyIntervalMs, updateIntervalMs: deps.watch.updateIntervalMs }),
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
        return { ok: true, batch: await useCases.setMintBatchStatus(ctx, actorOf(context), valuesOf(req)) };
      },

      async activateMintUnits(req, context) {
        const { brandId, target } = valuesOf(req);
        if (target.case === undefined) throw new ConnectError('target: exactly one of mint_batch_id or unit_ids is required', Code.InvalidArgument);
        const units = target.case === 'mintBatchId' ? { mintBatchId: target.value } : { unitIds: target.value.ids };
        return { ok: true, activatedCount: (await useCases.activateMintUnits(ctx, actorOf(context), { brandId, ...units })).activatedCount };
      },

      async moveSerials(req, context) {
        const { target, ...v } = valuesOf(req);
        if (target.case === undefined) throw new InvalidInputError([{ field: 'target', message: 'exactly one of serials, range or container is required' }]);
        const move = await useCases.moveSerials(ctx, actorOf(context), {
          ...v,
          target: target.case === 'container' ? { container: target.value } : target.value,
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
        return { ...(await useCases.reconciliationDocument(ctx, req.brandId, req.mintBatchId, valuesOf(req).format)), ok: true };
      },

      async getSerialMove(req, context) {
        return { ok: true, move: await useCases.getSerialMove(ctx, req.brandId, req.moveId, principalOf(context).partnerId, valuesOf(req)) };
      },
    }),
  };
}
