import {
  createScanPartition,
  defaultPartitionDays,
  deleteScanIngestBatchesBefore,
  dropScanPartitionsBefore,
  rollUpAndDeleteDefaultBefore,
  rollUpScanDays,
  scanPartitionDays,
  utcDay,
  unitOfWork,
} from '@mint/db';
import {
  appendEvents,
  findScanAlertSettings,
  ingestScanBatch,
  markUnitsSuspect,
  scanStats,
  unitScans,
  type IngestOutcome,
  type ScanRecord,
  type ScanStatsOrder,
  type ScanStatsRow,
  type UnitScanRow,
} from '@mint/db';
import {
  assertValid,
  clientClasses,
  countryOf,
  decodeScanCursor,
  encodeScanCursor,
  InvalidInputError,
  isUuid,
  maxIngestScans,
  normalizeGtin,
  scanGroups,
  validateIngestScan,
  type ClientClass,
  type FieldViolation,
  type IngestRowError,
  type IngestScan,
  type IngestScanInput,
  type ScanGroup,
  createScanRules,
  type ScanRuleLimits,
  type RuleScan,
  defaultScanAlertSettings,
  type ScanAlertSettings,
} from '@mint/domain';
import type { UseCaseContext } from '../context.ts';

/** The scan rules of a process, fed with the scans as they are written; see {@link createScanAlerts}. */
export interface ScanAlerts {
  /** Raises the alerts `scans` call for (events with their webhook deliveries); resolves to how many. */
  observe(scans: readonly RuleScan[]): Promise<number>;
  /**
   * Queues `scans` for the rules behind the batches queued before (the rules see batches in the
   * order queued) and resolves at once, or, while `maxQueued` batches wait, once one of them went
   * through: an edge's ingest call answers without waiting for its alerts, and a flood of calls
   * waits rather than growing the queue. A failed batch is reported to `onError`.
   */
  enqueue(scans: readonly RuleScan[]): Promise<void>;
  /** Resolves once every batch queued so far went through the rules. */
  drained(): Promise<void>;
  /** The brand's settings as the rules use them (cached). */
  settingsOf(brandId: string): Promise<ScanAlertSettings>;
  /** Forgets the brand's cached settings, after a change in this process. */
  invalidate(brandId: string): void;
}

/** Options of {@link createScanAlerts}. */
export interface ScanAlertsOptions {
  /** How long a brand's settings are cached; default 10 s (a change in another process applies within it). */
  readonly settingsCacheMs?: number;
  /** Batches {@link ScanAlerts.enqueue} lets wait before it makes its caller wait; default 4. */
  readonly maxQueued?: number;
  /** Called with each queued batch's error (its alerts are lost); default: none. */
  readonly onError?: (error: unknown) => void;
  /** Called after each queued batch went through the rules, with its alerts and the milliseconds the rules took. */
  readonly onBatch?: (raised: number, ms: number) => void;
}

/**
 * The scan rules on the stream of written scans (the resolver's batches, each ingested batch):
 * never-issued serials, withdrawn units and suspected clones ({@link createScanRules}), with each
 * brand's settings (cached per brand for `settingsCacheMs`; a brand's change in this process
 * applies at once), whose alerts are audit events and so signed webhooks to the brand's endpoints
 * that want them. A clone or withdrawn-unit alert marks its unit suspect, so its resolver answers
 * carry a caution until the brand clears it. One instance per process: its memory deduplicates a
 * unit's alerts within a day.
 */
export function createScanAlerts(ctx: UseCaseContext, limits?: ScanRuleLimits, options: ScanAlertsOptions = {}): ScanAlerts {
  const rule = createScanRules(limits);
  const ttlMs = options.settingsCacheMs ?? 10_000;
  const cache = new Map<string, { settings: ScanAlertSettings | undefined; at: number }>();
  /** The settings of these brands, those not cached (or stale) read in one query; undefined: the brand set none. */
  const load = async (brandIds: readonly string[]): Promise<Map<string, ScanAlertSettings | undefined>> => {
    const now = Date.now();
    const missing = brandIds.filter((id) => {
      const hit = cache.get(id);
      return hit === undefined || now - hit.at > ttlMs;
    });
    if (missing.length > 0) {
      const found = await findScanAlertSettings(unitOfWork(ctx.db), missing);
      if (cache.size > 10_000) cache.clear();
      for (const id of missing) cache.set(id, { settings: found.get(id), at: now });
    }
    return new Map(brandIds.map((id) => [id, cache.get(id)?.settings]));
  };
  const maxQueued = options.maxQueued ?? 4;
  let tail: Promise<void> = Promise.resolve();
  let queued = 0;
  const waiting: (() => void)[] = [];
  const alerts: ScanAlerts = {
    async enqueue(scans) {
      while (queued >= maxQueued) await new Promise<void>((resolve) => waiting.push(resolve));
      queued++;
      tail = tail.then(async () => {
        const started = performance.now();
        try {
          const raised = await alerts.observe(scans);
          options.onBatch?.(raised, performance.now() - started);
        } catch (error) {
          options.onError?.(error);
        } finally {
          queued--;
          waiting.shift()?.();
        }
      });
    },
    drained() {
      return tail;
    },
    async observe(scans) {
      if (scans.length === 0) return 0;
      const settings = await load([...new Set(scans.map((s) => s.brandId))]);
      const at = ctx.clock();
      const events = rule.observe(scans, at, (brandId) => settings.get(brandId));
      if (events.length === 0) return 0;
      const em = unitOfWork(ctx.db);
      await appendEvents(em, at, events);
      const marks = events
        .filter((e) => e.eventType === 'scan_clone_suspected' || e.eventType === 'scan_withdrawn_unit')
        .map((e) => ({
          brandId: e.brandId,
          gtin: (e.payload['gtin'] as string | null) ?? null,
          serial: e.payload['serial'] as string,
          rule: e.eventType === 'scan_clone_suspected' ? 'clone' : 'withdrawn',
        }));
      if (marks.length > 0) await markUnitsSuspect(em, marks, at);
      return events.length;
    },
    async settingsOf(brandId) {
      return (await load([brandId])).get(brandId) ?? defaultScanAlertSettings;
    },
    invalidate(brandId) {
      cache.delete(brandId);
    },
  };
  return alerts;
}

/** A recorded scan as the rules see it. */
export function ruleScanOf(scan: ScanRecord): RuleScan {
  return {
    brandId: scan.brandId,
    scannedAt: scan.scannedAt,
    gtin: scan.gtin,
    serial: scan.kind === 'serial' ? scan.identifier : null,
    unitKnown: scan.unitKnown ?? null,
    count: scan.count ?? 1,
    country: scan.country ?? null,
    clientClass: scan.clientClass ?? null,
    unitStatus: scan.unitStatus ?? null,
    outcome: scan.outcome,
    visitor: scan.visitor ?? null,
  };
}

/** An ingest call: a brand's batch of scans from an edge resolver or a log shipper. */
export interface RecordScanEventsInput {
  readonly brandId: string;
  /** The sender's key of the batch (1..200 characters): a replay writes nothing. */
  readonly batchKey: string;
  readonly scans: readonly IngestScanInput[];
}

/**
 * Records an edge's batch of scans (the spec's record_scan_event): each row is validated on its
 * own; the valid ones are written with the state of the unit they name, the bad ones refused with
 * their index, field and reason. Idempotent per batch key (a replay answers the first outcome and
 * writes nothing). More than 10,000 scans, or none, is refused whole. The written scans of
 * serials and tokens are queued for the scan rules (`alerts`), which raise their alerts after the
 * call answers (within the alerts' 60 seconds; a call waits while the rules are behind).
 */
export async function recordScanEvents(ctx: UseCaseContext, input: RecordScanEventsInput, alerts?: ScanAlerts): Promise<IngestOutcome> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  if (input.batchKey.length < 1 || input.batchKey.length > 200) v.push({ field: 'batch_key', message: 'must be 1..200 characters' });
  if (input.scans.length < 1 || input.scans.length > maxIngestScans) v.push({ field: 'scans', message: `must hold 1..${maxIngestScans} scans` });
  assertValid(v);
  const now = ctx.clock();
  const good: IngestScan[] = [];
  const rejected: IngestRowError[] = [];
  input.scans.forEach((row, index) => {
    const checked = validateIngestScan(row, now);
    if ('scan' in checked) good.push(checked.scan);
    else for (const violation of checked.violations) rejected.push({ index, ...violation });
  });
  const outcome = await ingestScanBatch(unitOfWork(ctx.db), input.brandId, input.batchKey, good, rejected, now);
  if (alerts !== undefined && !outcome.replayed) {
    await alerts.enqueue(
      outcome.unitScans.map((s) => ({
        brandId: input.brandId,
        scannedAt: s.scannedAt,
        gtin: s.gtin,
        serial: s.kind === 'serial' || s.kind === 'token' ? s.identifier : null,
        unitKnown: s.unitKnown,
        count: s.count,
        country: s.country,
        clientClass: s.clientClass,
        unitStatus: s.unitStatus,
        outcome: s.outcome,
        visitor: s.visitor,
      })),
    );
  }
  return outcome;
}

/** A GetScanStats query. */
export interface ScanStatsQuery {
  readonly brandId: string;
  readonly groupBy: ScanGroup;
  readonly from: Date | null;
  readonly to: Date | null;
  readonly order: ScanStatsOrder;
  readonly gtin?: string | null;
  readonly lot?: string | null;
  readonly batchId?: string | null;
  readonly serial?: string | null;
  readonly country?: string | null;
  readonly clientClass?: ClientClass | null;
  readonly unitKnown?: boolean | null;
  /** 1..1000; default 100. */
  readonly limit?: number | null;
  readonly cursor?: string | null;
}

/** A page of groups. */
export interface ScanStatsPage {
  readonly groups: readonly ScanStatsRow[];
  readonly hasMore: boolean;
  /** Opaque cursor of the next page; null on the last. */
  readonly next: string | null;
}

/** Longest range of one stats query. */
const maxRangeMs = 400 * 86_400_000;

/**
 * Scans of a brand in [from, to) (at most 400 days) grouped by day, GTIN, batch, lot, unit,
 * country or client class, filtered, keyset paged by key or by scans descending (`top`): scans
 * per day of a product, never-issued attempts per GTIN (`unitKnown: false`), top scanned units.
 */
export async function getScanStats(ctx: UseCaseContext, q: ScanStatsQuery): Promise<ScanStatsPage> {
  const v: FieldViolation[] = [];
  if (!scanGroups.includes(q.groupBy)) v.push({ field: 'group_by', message: `must be one of ${scanGroups.join(', ')}` });
  if (q.from === null) v.push({ field: 'from', message: 'is required' });
  if (q.to === null) v.push({ field: 'to', message: 'is required' });
  if (q.from !== null && q.to !== null && !(q.from < q.to)) v.push({ field: 'to', message: 'must be after from' });
  if (q.from !== null && q.to !== null && q.to.getTime() - q.from.getTime() > maxRangeMs)
    v.push({ field: 'to', message: 'must be at most 400 days after from' });
  const gtin = q.gtin == null || q.gtin === '' ? null : normalizeGtin(q.gtin);
  if (q.gtin != null && q.gtin !== '' && gtin === null) v.push({ field: 'gtin', message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' });
  const country = q.country == null || q.country === '' ? null : countryOf(q.country);
  if (q.country != null && q.country !== '' && country === null) v.push({ field: 'country', message: 'must be an ISO 3166-1 alpha-2 code' });
  if (q.batchId != null && q.batchId !== '' && !isUuid(q.batchId)) v.push({ field: 'batch_id', message: 'must be a uuid' });
  if (q.clientClass != null && !clientClasses.includes(q.clientClass)) v.push({ field: 'client_class', message: `must be one of ${clientClasses.join(', ')}` });
  const limit = q.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) v.push({ field: 'limit', message: 'must be an integer from 1 to 1000' });
  assertValid(v);
  let after: { key: string; scans: number } | null = null;
  if (q.cursor != null && q.cursor !== '') {
    const [key, scans] = decodeScanCursor(q.cursor, ['s', 'n']) as [string, number];
    after = { key, scans };
  }
  const rows = await scanStats(
    unitOfWork(ctx.db),
    {
      brandId: q.brandId,
      from: q.from!,
      to: q.to!,
      gtin,
      lot: q.lot || null,
      batchId: q.batchId || null,
      serial: q.serial || null,
      country,
      clientClass: q.clientClass ?? null,
      unitKnown: q.unitKnown ?? null,
    },
    q.groupBy,
    q.order,
    after,
    limit + 1,
  );
  const hasMore = rows.length > limit;
  const groups = hasMore ? rows.slice(0, limit) : rows;
  const last = groups[groups.length - 1];
  return { groups, hasMore, next: hasMore && last !== undefined ? encodeScanCursor([last.key, last.scans]) : null };
}

/** A GetUnitScans query. */
export interface UnitScansQuery {
  readonly brandId: string;
  /** The unit's GTIN; null for a unit without GTIN (named by its token). */
  readonly gtin: string | null;
  readonly serial: string;
  /** 1..100; default 50. */
  readonly limit?: number | null;
  readonly cursor?: string | null;
}

/** A unit's scans: totals, first and last scan, and a page newest first. */
export interface UnitScansPage {
  readonly total: number;
  readonly firstAt: Date | null;
  readonly lastAt: Date | null;
  readonly countries: readonly string[];
  readonly scans: readonly UnitScanRow[];
  readonly hasMore: boolean;
  /** Opaque cursor of the next page; null on the last. */
  readonly next: string | null;
}

/** One unit's scans (first and last scan, total, countries, a page newest first); a unit never scanned has none. */
export async function getUnitScans(ctx: UseCaseContext, q: UnitScansQuery): Promise<UnitScansPage> {
  const v: FieldViolation[] = [];
  const gtin = q.gtin === null || q.gtin === '' ? null : normalizeGtin(q.gtin);
  if (q.gtin !== null && q.gtin !== '' && gtin === null) v.push({ field: 'gtin', message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' });
  if (q.serial === '' || q.serial.length > 200) v.push({ field: 'serial', message: 'must be 1..200 characters' });
  const limit = q.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) v.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  assertValid(v);
  let after: { at: Date; id: string } | null = null;
  if (q.cursor != null && q.cursor !== '') {
    const [at, id] = decodeScanCursor(q.cursor, ['n', 'n']) as [number, number];
    after = { at: new Date(at), id: String(id) };
    if (Number.isNaN(after.at.getTime())) throw new InvalidInputError([{ field: 'cursor', message: 'is not a cursor returned by this read' }]);
  }
  const found = await unitScans(unitOfWork(ctx.db), q.brandId, gtin, q.serial, after, limit + 1);
  const hasMore = found.scans.length > limit;
  const scans = hasMore ? found.scans.slice(0, limit) : found.scans;
  const last = scans[scans.length - 1];
  return { ...found, scans, hasMore, next: hasMore && last !== undefined ? encodeScanCursor([last.scannedAt.getTime(), Number(last.id)]) : null };
}

/** What one {@link maintainScanLedger} did. */
export interface ScanLedgerUpkeep {
  /** Day partitions made (ahead of time, or for scans waiting in the default partition). */
  readonly partitionsCreated: number;
  /** Brands' days rolled up (or rolled up again after late scans). */
  readonly daysRolledUp: number;
  /** Scans past retention that waited in the default partition, added to their days' rollups and deleted. */
  readonly lateScansRolledUp: number;
  /** Day partitions dropped whole, past retention. */
  readonly partitionsDropped: readonly string[];
  /** Ingest batch keys forgotten, past retention. */
  readonly batchKeysDeleted: number;
}

/** Options of {@link maintainScanLedger}. */
export interface ScanLedgerUpkeepOptions {
  /** Days of raw scans kept; 0 keeps them for good (partitions and rollups are still made). */
  readonly retentionDays: number;
  /** Day partitions made ahead of today; default 2. */
  readonly aheadDays?: number;
  /** Past days given a partition even with no scan yet (an edge's backlog); default 7, never before retention. */
  readonly behindDays?: number;
  /** A day is rolled up this long after it ends, once the resolver's last scans of it are written; default 15 minutes. */
  readonly graceMs?: number;
}

const dayMs = 86_400_000;

/**
 * The executor's upkeep of the scan ledger, safe to repeat and to run in two executors at once:
 * makes the day partitions of the coming days (and of past days whose scans wait in the default
 * partition, moving them in), rolls each brand's closed days up into `scan_daily_rollups` (again
 * after a late scan of the day), then past `retentionDays` drops whole day partitions (each only
 * once its rollups are current), rolls up and deletes late scans of such days, and forgets ingest
 * batch keys. The rollups stay.
 */
export async function maintainScanLedger(ctx: UseCaseContext, options: ScanLedgerUpkeepOptions): Promise<ScanLedgerUpkeep> {
  const now = ctx.clock().getTime();
  const em = () => unitOfWork(ctx.db);
  const cutoffDay = options.retentionDays > 0 ? utcDay(now - options.retentionDays * dayMs) : null;
  let partitionsCreated = 0;
  const wanted = new Set<string>();
  for (let d = -(options.behindDays ?? 7); d <= (options.aheadDays ?? 2); d++) wanted.add(utcDay(now + d * dayMs));
  for (const day of await defaultPartitionDays(em(), new Date(cutoffDay === null ? 0 : Date.parse(`${cutoffDay}T00:00:00Z`)))) wanted.add(day);
  const made = new Set(await scanPartitionDays(em()));
  for (const day of [...wanted].sort()) {
    if ((cutoffDay !== null && day < cutoffDay) || made.has(day)) continue;
    if (await createScanPartition(em(), day)) partitionsCreated++;
  }
  const lateScansRolledUp = cutoffDay === null ? 0 : await rollUpAndDeleteDefaultBefore(em(), cutoffDay);
  const batch = 500;
  let daysRolledUp = 0;
  for (let n = batch; n === batch; ) daysRolledUp += n = await rollUpScanDays(em(), new Date(now - (options.graceMs ?? 15 * 60_000)), batch);
  const partitionsDropped = cutoffDay === null ? [] : await dropScanPartitionsBefore(em(), cutoffDay);
  let batchKeysDeleted = 0;
  if (cutoffDay !== null) {
    const before = new Date(now - options.retentionDays * dayMs);
    for (let n = 10_000; n === 10_000; ) batchKeysDeleted += n = await deleteScanIngestBatchesBefore(em(), before, 10_000);
  }
  return { partitionsCreated, daysRolledUp, lateScansRolledUp, partitionsDropped, batchKeysDeleted };
}
