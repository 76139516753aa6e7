// ScanService handlers: an edge's batches of scans into the scan ledger, the ledger's reads, the
// brand's alert settings and the clearing of a suspect unit.

import type { ServiceImpl } from '@connectrpc/connect';
import { ScanClientClass, type ScanService, ScanStatsOrder } from '@mint/contract';
import type { ClientClass, ScanAlertSettings } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { dateOrNull, orNull, orUnset, scanClientClass, scanGroupBy, toTimestamp } from './wire.ts';

/** The use cases ScanService calls. */
export type ScanUseCases = Pick<
  typeof UseCases,
  'recordScanEvents' | 'getScanStats' | 'getUnitScans' | 'getScanAlertSettings' | 'updateScanAlertSettings' | 'clearSuspectUnit'
>;

/** What the ScanService handlers need. */
export interface ScanServiceDeps extends HandlerDeps<ScanUseCases> {
  /** The process's scan rules, fed with each ingested batch; none when absent. */
  readonly scanAlerts?: UseCases.ScanAlerts;
}

/** The client class of a stored row as the wire's enum (unspecified for rows written before classes were kept). */
const classToWire = (value: string | null): ScanClientClass => (value === null ? ScanClientClass.UNSPECIFIED : scanClientClass.toWire(value as ClientClass));

/** Settings as the wire shows them. */
const settingsToWire = (s: ScanAlertSettings) => ({
  neverIssued: s.neverIssued,
  withdrawn: s.withdrawn,
  clone: s.clone,
  burst: s.burst,
  cloneWindowHours: s.cloneWindowHours,
  cloneVisitorsPerDay: s.cloneVisitorsPerDay,
  alertsPerMinute: s.alertsPerMinute,
  withdrawnIgnored: [...s.withdrawnIgnored],
});

/** The ScanService implementation. */
export function createScanServiceHandlers(deps: ScanServiceDeps): ServiceImpl<typeof ScanService> {
  const { ctx, useCases, scanAlerts } = deps;
  return {
    async recordScanEvents(req) {
      const outcome = await useCases.recordScanEvents(
        ctx,
        {
          brandId: req.brandId,
          batchKey: req.batchKey,
          scans: req.scans.map((s) => ({
            scannedAt: dateOrNull(s.scannedAt),
            kind: s.kind,
            gtin: s.gtin === '' ? null : s.gtin,
            identifier: s.identifier === '' ? null : s.identifier,
            lot: s.lot === '' ? null : s.lot,
            outcome: s.outcome,
            representation: s.representation,
            linkType: s.linkType === '' ? null : s.linkType,
            country: s.country === '' ? null : s.country,
            visitor: s.visitor === '' ? null : s.visitor,
            count: s.count ?? 1,
            // An unknown number is refused for its row, not for the batch.
            clientClass: s.clientClass === ScanClientClass.UNSPECIFIED ? null : (ScanClientClass[s.clientClass]?.toLowerCase() ?? String(s.clientClass)),
          })),
        },
        scanAlerts,
      );
      return { ok: true, accepted: outcome.accepted, rejected: outcome.rejected.map((r) => ({ ...r })), replayed: outcome.replayed };
    },

    async getScanStats(req) {
      const page = await useCases.getScanStats(ctx, {
        brandId: req.brandId,
        groupBy: scanGroupBy.toDomain(req.groupBy, 'group_by'),
        from: dateOrNull(req.from),
        to: dateOrNull(req.to),
        order: req.order === ScanStatsOrder.TOP ? 'top' : 'key',
        gtin: orNull(req.gtin),
        lot: orNull(req.lot),
        batchId: orNull(req.batchId),
        serial: orNull(req.serial),
        country: orNull(req.country),
        clientClass: req.clientClass === ScanClientClass.UNSPECIFIED ? null : scanClientClass.toDomain(req.clientClass, 'client_class'),
        unitKnown: orNull(req.unitKnown),
        limit: orNull(req.limit),
        cursor: orNull(req.cursor),
      });
      return {
        ok: true,
        hasMore: page.hasMore,
        nextCursor: orUnset(page.next),
        groups: page.groups.map((g) => ({
          key: g.key,
          scans: BigInt(g.scans),
          neverIssued: BigInt(g.neverIssued),
          visitors: BigInt(g.visitors),
          firstScanAt: toTimestamp(g.firstAt),
          lastScanAt: toTimestamp(g.lastAt),
        })),
      };
    },

    async getUnitScans(req) {
      const page = await useCases.getUnitScans(ctx, {
        brandId: req.brandId,
        gtin: orNull(req.gtin),
        serial: req.serial,
        limit: orNull(req.limit),
        cursor: orNull(req.cursor),
      });
      return {
        ok: true,
        total: BigInt(page.total),
        countries: [...page.countries],
        hasMore: page.hasMore,
        nextCursor: orUnset(page.next),
        firstScanAt: page.firstAt === null ? undefined : toTimestamp(page.firstAt),
        lastScanAt: page.lastAt === null ? undefined : toTimestamp(page.lastAt),
        scans: page.scans.map((s) => ({
          scannedAt: toTimestamp(s.scannedAt),
          outcome: s.outcome,
          representation: s.representation,
          linkType: orUnset(s.linkType),
          unitStatus: orUnset(s.unitStatus),
          country: orUnset(s.country),
          clientClass: classToWire(s.clientClass),
          scans: s.scans,
          source: s.source,
        })),
      };
    },

    async getScanAlertSettings(req) {
      return { ok: true, settings: settingsToWire(await useCases.getScanAlertSettings(ctx, req.brandId)) };
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
      return { ok: true, settings: settingsToWire(settings) };
    },

    async clearSuspectUnit(req, context) {
      const outcome = await useCases.clearSuspectUnit(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          gtin: orNull(req.gtin),
          serial: req.serial,
          reason: req.reason,
        },
      );
      return { ok: true, cleared: outcome.cleared, rule: orUnset(outcome.rule), since: outcome.since === null ? undefined : toTimestamp(outcome.since) };
    },
  };
}
