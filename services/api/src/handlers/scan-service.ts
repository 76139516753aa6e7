// ScanService handlers: an edge's batches of scans into the scan ledger, the ledger's reads, the
// brand's alert settings and the clearing of a suspect unit.

import type { ServiceImpl } from '@connectrpc/connect';
import { ScanClientClass, ScanService, ScanStatsOrder } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the ScanService handlers need. */
export interface ScanServiceDeps extends HandlerDeps {
  /** The process's scan rules, fed with each ingested batch; none when absent. */
  readonly scanAlerts?: UseCases.ScanAlerts;
}

/** The ScanService implementation. */
export function createScanServiceHandlers(deps: ScanServiceDeps): ServiceImpl<typeof ScanService> {
  const { ctx, useCases, scanAlerts } = deps;
  return fromViews(ScanService, {
    async recordScanEvents(req) {
      const outcome = await useCases.recordScanEvents(
        ctx,
        {
          brandId: req.brandId,
          batchKey: req.batchKey,
          // An empty gtin, identifier, lot, country or visitor is unset to the use case as well.
          scans: req.scans.map((s) => ({
            ...valuesOf({ ...s, clientClass: ScanClientClass.UNSPECIFIED }),
            linkType: s.linkType || null,
            count: s.count ?? 1,
            // An unknown number is refused for its row, not for the batch.
            clientClass: s.clientClass === ScanClientClass.UNSPECIFIED ? null : (ScanClientClass[s.clientClass]?.toLowerCase() ?? String(s.clientClass)),
          })),
        },
        scanAlerts,
      );
      return { ...outcome, ok: true };
    },

    async getScanStats(req) {
      const v = valuesOf(req);
      const page = await useCases.getScanStats(ctx, { ...v, order: v.order === ScanStatsOrder.TOP ? 'top' : 'key' });
      return {
        ok: true,
        hasMore: page.hasMore,
        nextCursor: page.next,
        groups: page.groups.map((g) => ({ ...g, firstScanAt: g.firstAt, lastScanAt: g.lastAt })),
      };
    },

    async getUnitScans(req) {
      const page = await useCases.getUnitScans(ctx, valuesOf(req));
      return { ...page, ok: true, nextCursor: page.next, firstScanAt: page.firstAt, lastScanAt: page.lastAt };
    },

    async getScanAlertSettings(req) {
      return { ok: true, settings: await useCases.getScanAlertSettings(ctx, req.brandId) };
    },

    async updateScanAlertSettings(req, context) {
      const settings = await useCases.updateScanAlertSettings(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          patch: {
            neverIssued: req.neverIssued,
            withdrawn: req.withdrawn,
            clone: req.clone,
            burst: req.burst,
            cloneWindowHours: req.cloneWindowHours,
            cloneVisitorsPerDay: req.cloneVisitorsPerDay,
            alertsPerMinute: req.alertsPerMinute,
            withdrawnIgnored: req.replaceWithdrawnIgnored || req.withdrawnIgnored.length > 0 ? req.withdrawnIgnored : undefined,
          },
        },
        scanAlerts,
      );
      return { ok: true, settings };
    },

    async clearSuspectUnit(req, context) {
      return { ...(await useCases.clearSuspectUnit(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
    },
  });
}
