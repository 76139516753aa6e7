/**
 * The scan rules: a serial the brand never issued, scanned under its GTIN (a guessed or forged
 * code), and a scan of a unit the brand withdrew (its batch voided, or a status that is neither
 * active nor inactive: a lifecycle end state), and a suspected clone (one unit seen from two
 * countries within a window, or by more distinct visitors in a day than a threshold). Each serial
 * or unit raises one alert of each kind a UTC day;
 * beyond a brand's budget a minute the rest are counted into one burst alert a minute (never-issued)
 * or wait for the next minute (withdrawn), so anonymous traffic cannot turn into unbounded events.
 * Each brand's settings (rules on or off, thresholds, ignored withdrawn states) come from the caller.
 * Pure: the caller passes the time and writes the alerts.
 */

import type { NewEvent } from './events.ts';
import type { ScanAlertSettings } from './scan-alert-settings.ts';

/** Unit statuses of a unit in use; any other (a lifecycle end state) is a withdrawn unit. */
const liveStatuses: ReadonlySet<string> = new Set(['active', 'inactive']);

/** Limits of a {@link ScanRules}. */
export interface ScanRuleLimits {
  /** Alerts of single serials a brand gets per minute; the rest go into one burst alert. */
  readonly perBrandPerMinute: number;
  /** (brand, GTIN, serial) triples remembered for the day's deduplication; beyond, the memory starts over. */
  readonly maxRemembered: number;
  /** A unit seen from two countries within this many hours is a suspected clone. */
  readonly cloneWindowHours?: number;
  /** A unit seen by more distinct visitors than this in a day is a suspected clone. */
  readonly cloneVisitorsPerDay?: number;
}

/** The defaults: 20 alerts a brand a minute per rule, 100,000 units remembered (a few MB), clones: two countries in 24 h or over 20 visitors a day. */
export const defaultScanRuleLimits: ScanRuleLimits = { perBrandPerMinute: 20, maxRemembered: 100_000, cloneWindowHours: 24, cloneVisitorsPerDay: 20 };

/** A scan the rule looks at. */
export interface RuleScan {
  readonly brandId: string;
  readonly scannedAt: Date;
  readonly gtin: string | null;
  /** The serial scanned; null for a flood's sampled row (its serials were not kept). */
  readonly serial: string | null;
  /** False for a serial the brand never issued, true for a known unit. */
  readonly unitKnown: boolean | null;
  /** The unit's status at the scan, for a known unit. */
  readonly unitStatus: string | null;
  /** resolved, not_found, gone or not_activated. */
  readonly outcome: string;
  /** Scans the row stands for. */
  readonly count: number;
  /** ISO country, when known. */
  readonly country: string | null;
  /** Client class, when known. */
  readonly clientClass: string | null;
  /** The day's visitor hash, when known. */
  readonly visitor?: string | null;
}

/** Decides the alerts of the scan rules; see {@link createScanRules}. */
export interface ScanRules {
  /**
   * The events `scans` raise (`scan_never_issued_serial`, `scan_never_issued_burst`, `scan_withdrawn_unit`, `scan_clone_suspected`), given `now`;
   * `settingsOf` gives a brand's settings (rules on or off, thresholds), the limits' values for a brand it answers undefined for.
   */
  observe(scans: readonly RuleScan[], now: Date, settingsOf?: (brandId: string) => ScanAlertSettings | undefined): NewEvent[];
}

/**
 * A rule instance holding its day's memory: a serial alerts once a UTC day; a brand gets at most
 * `perBrandPerMinute` serial alerts a minute, and the never-issued scans beyond them (flood rows
 * without serials included) are counted into one `scan_never_issued_burst` alert per brand and
 * call, at most one a minute.
 */
export function createScanRules(limits: ScanRuleLimits = defaultScanRuleLimits): ScanRules {
  const fallback: ScanAlertSettings = {
    neverIssued: true,
    withdrawn: true,
    clone: true,
    burst: true,
    cloneWindowHours: limits.cloneWindowHours ?? 24,
    cloneVisitorsPerDay: limits.cloneVisitorsPerDay ?? 20,
    alertsPerMinute: limits.perBrandPerMinute,
    withdrawnIgnored: [],
  };
  /** Per known unit: when it was last seen from each country, and its visitors of the day. */
  const units = new Map<string, { countries: Map<string, number>; day: string; visitors: Set<string> }>();
  let day = '';
  /** The UTC day of the last scan seen, as a day number and as YYYY-MM-DD (formatted once a day, not once a scan). */
  let lastDayNumber = Number.NaN;
  let lastDay = '';
  const seen = new Set<string>();
  const minutes = new Map<string, { minute: number; alerts: number; burstSent: boolean }>();
  /** Records a known unit's scan; 'countries' or 'visitors' when it now looks cloned, else null. */
  const cloneSignal = (scan: RuleScan, today: string, settings: ScanAlertSettings): 'countries' | 'visitors' | null => {
    const cloneWindowMs = settings.cloneWindowHours * 3_600_000;
    const cloneVisitors = settings.cloneVisitorsPerDay;
    const key = `${scan.brandId} ${scan.gtin ?? ''} ${scan.serial}`;
    let unit = units.get(key);
    if (unit === undefined) {
      if (units.size >= limits.maxRemembered) units.clear();
      unit = { countries: new Map(), day: today, visitors: new Set() };
      units.set(key, unit);
    }
    const at = scan.scannedAt.getTime();
    // forEach, not for-of with destructuring: no array per entry on every scan.
    if (unit.countries.size > 0)
      unit.countries.forEach((last, country, all) => {
        if (at - last > cloneWindowMs) all.delete(country);
      });
    if (scan.country !== null) unit.countries.set(scan.country, Math.max(at, unit.countries.get(scan.country) ?? 0));
    if (unit.day !== today) {
      unit.day = today;
      unit.visitors.clear();
    }
    if (scan.visitor != null && unit.visitors.size <= cloneVisitors) unit.visitors.add(scan.visitor);
    if (unit.countries.size >= 2) return 'countries';
    return unit.visitors.size > cloneVisitors ? 'visitors' : null;
  };
  return {
    observe(scans, now, settingsOf) {
      const events: NewEvent[] = [];
      const bursts = new Map<string, { scans: number; gtins: Set<string>; countries: Set<string>; classes: Set<string> }>();
      const minute = Math.floor(now.getTime() / 60_000);
      // In time order: a day's memory starts over at the first scan of a later day, so a scan of
      // the day before that came after it in the batch (rows come back in the database's order)
      // would be skipped as late.
      const ordered = scans.every((scan, i) => i === 0 || scans[i - 1]!.scannedAt.getTime() <= scan.scannedAt.getTime())
        ? scans
        : [...scans].sort((a, b) => a.scannedAt.getTime() - b.scannedAt.getTime());
      for (const scan of ordered) {
        const settings = settingsOf?.(scan.brandId) ?? fallback;
        const withdrawn =
          scan.unitKnown === true && scan.serial !== null && (scan.outcome === 'gone' || (scan.unitStatus !== null && !liveStatuses.has(scan.unitStatus)));
        const neverIssued = scan.unitKnown === false && scan.gtin !== null;
        if (!withdrawn && !neverIssued && !(scan.unitKnown === true && scan.serial !== null)) continue;
        if (
          withdrawn &&
          (!settings.withdrawn ||
            settings.withdrawnIgnored.includes(scan.unitStatus !== null && !liveStatuses.has(scan.unitStatus) ? scan.unitStatus : 'voided'))
        )
          continue;
        if (!withdrawn && !neverIssued && !settings.clone) continue;
        if (neverIssued && !settings.neverIssued && !settings.burst) continue;
        const dayNumber = Math.floor(scan.scannedAt.getTime() / 86_400_000);
        if (dayNumber !== lastDayNumber) {
          lastDayNumber = dayNumber;
          lastDay = new Date(dayNumber * 86_400_000).toISOString().slice(0, 10);
        }
        const today = lastDay;
        if (today !== day || seen.size >= limits.maxRemembered) {
          if (today < day) continue; // a late scan of a past day: its day has been alerted on
          day = today;
          seen.clear();
        }
        const budgetKey = withdrawn ? `withdrawn ${scan.brandId}` : scan.unitKnown === true ? `clone ${scan.brandId}` : scan.brandId;
        let budget = minutes.get(budgetKey);
        if (budget === undefined || budget.minute !== minute) {
          budget = { minute, alerts: 0, burstSent: false };
          if (minutes.size >= limits.maxRemembered) minutes.clear();
          minutes.set(budgetKey, budget);
        }
        if (scan.unitKnown === true && scan.serial !== null && !withdrawn) {
          const reason = cloneSignal(scan, today, settings);
          const key = `clone ${scan.brandId} ${scan.gtin ?? ''} ${scan.serial}`;
          if (reason === null || seen.has(key) || budget.alerts >= settings.alertsPerMinute) continue;
          seen.add(key);
          budget.alerts++;
          const unit = units.get(`${scan.brandId} ${scan.gtin ?? ''} ${scan.serial}`)!;
          events.push({
            brandId: scan.brandId,
            eventType: 'scan_clone_suspected',
            entityType: 'scan',
            entityId: `${scan.gtin ?? ''} ${scan.serial}`,
            actor: null,
            payload: {
              gtin: scan.gtin,
              serial: scan.serial,
              reason,
              countries: [...unit.countries.keys()].sort(),
              visitors_today: unit.visitors.size,
              scanned_at: scan.scannedAt.toISOString(),
            },
          });
          continue;
        }
        if (withdrawn) {
          const key = `withdrawn ${scan.brandId} ${scan.gtin ?? ''} ${scan.serial}`;
          if (seen.has(key) || budget.alerts >= settings.alertsPerMinute) continue;
          seen.add(key);
          budget.alerts++;
          events.push({
            brandId: scan.brandId,
            eventType: 'scan_withdrawn_unit',
            entityType: 'scan',
            entityId: `${scan.gtin ?? ''} ${scan.serial}`,
            actor: null,
            payload: {
              gtin: scan.gtin,
              serial: scan.serial,
              unit_status: scan.unitStatus,
              outcome: scan.outcome,
              scanned_at: scan.scannedAt.toISOString(),
              country: scan.country,
              client_class: scan.clientClass,
            },
          });
          continue;
        }
        if (scan.serial !== null) {
          const key = `${scan.brandId} ${scan.gtin} ${scan.serial}`;
          if (seen.has(key)) continue;
          if (budget.alerts < settings.alertsPerMinute) {
            seen.add(key);
            budget.alerts++;
            // With single alerts off, the minute's budget still counts: only the scans beyond it make a burst.
            if (settings.neverIssued)
              events.push({
                brandId: scan.brandId,
                eventType: 'scan_never_issued_serial',
                entityType: 'scan',
                entityId: `${scan.gtin} ${scan.serial}`,
                actor: null,
                payload: {
                  gtin: scan.gtin,
                  serial: scan.serial,
                  scanned_at: scan.scannedAt.toISOString(),
                  country: scan.country,
                  client_class: scan.clientClass,
                },
              });
            continue;
          }
        }
        if (budget.burstSent || !settings.burst) continue;
        const burst = bursts.get(scan.brandId) ?? { scans: 0, gtins: new Set<string>(), countries: new Set<string>(), classes: new Set<string>() };
        burst.scans += scan.count;
        burst.gtins.add(scan.gtin!);
        if (scan.country !== null) burst.countries.add(scan.country);
        if (scan.clientClass !== null) burst.classes.add(scan.clientClass);
        bursts.set(scan.brandId, burst);
      }
      for (const [brandId, burst] of bursts) {
        minutes.get(brandId)!.burstSent = true;
        events.push({
          brandId,
          eventType: 'scan_never_issued_burst',
          entityType: 'scan',
          entityId: [...burst.gtins].sort().join(','),
          actor: null,
          payload: {
            scans: burst.scans,
            gtins: [...burst.gtins].sort(),
            countries: [...burst.countries].sort(),
            client_classes: [...burst.classes].sort(),
            minute: new Date(minute * 60_000).toISOString(),
          },
        });
      }
      return events;
    },
  };
}
