/**
 * A brand's scan-alert settings: which rules raise alerts, the clone thresholds, the alerts a
 * minute, and the withdrawn-unit states (decommission reasons, lifecycle end states) that raise
 * none. Pure: validation names the offending field in snake_case, as on the wire.
 */

import type { FieldViolation } from './errors.ts';

/** The rules a brand can switch on or off. */
export type ScanAlertRule = 'never_issued' | 'withdrawn' | 'clone' | 'burst';

/** A brand's settings of the scan rules. */
export interface ScanAlertSettings {
  /** Alert on a serial the brand never issued, scanned under its GTIN. */
  readonly neverIssued: boolean;
  /** Alert on a scan of a withdrawn unit (voided batch, lifecycle end state). */
  readonly withdrawn: boolean;
  /** Alert on a suspected clone. */
  readonly clone: boolean;
  /** Count never-issued scans beyond the minute's budget into one burst alert. */
  readonly burst: boolean;
  /** A unit seen from two countries within this many hours is a suspected clone (1..720). */
  readonly cloneWindowHours: number;
  /** A unit seen by more distinct visitors than this in a UTC day is a suspected clone (1..10,000). */
  readonly cloneVisitorsPerDay: number;
  /** Single-serial alerts of each rule a minute (1..1,000); beyond, never-issued scans go into a burst alert. */
  readonly alertsPerMinute: number;
  /** Unit statuses or decommission reasons whose scans raise no withdrawn-unit alert (e.g. `recycled`). */
  readonly withdrawnIgnored: readonly string[];
}

/** The settings of a brand that set none: every rule on, two countries in 24 h or over 20 visitors a day, 20 alerts a minute. */
export const defaultScanAlertSettings: ScanAlertSettings = {
  neverIssued: true,
  withdrawn: true,
  clone: true,
  burst: true,
  cloneWindowHours: 24,
  cloneVisitorsPerDay: 20,
  alertsPerMinute: 20,
  withdrawnIgnored: [],
};

/** A change of settings: each field left undefined keeps its current value. */
export type ScanAlertSettingsPatch = { readonly [K in keyof ScanAlertSettings]?: ScanAlertSettings[K] | undefined };

/** A status or reason name: lowercase letters, digits and underscores, 1..40. */
const statusName = /^[a-z][a-z0-9_]{0,39}$/;

const intIn = (v: FieldViolation[], field: string, value: number, min: number, max: number): void => {
  if (!Number.isInteger(value) || value < min || value > max) v.push({ field, message: `must be an integer from ${min} to ${max}` });
};

/**
 * `current` with `patch` applied, or the violations naming each bad field (nothing is applied
 * then). `withdrawn_ignored` holds at most 20 distinct names; `active` and `inactive` are units
 * in use and cannot be listed.
 */
export function applyScanAlertSettings(
  current: ScanAlertSettings,
  patch: ScanAlertSettingsPatch,
): { settings: ScanAlertSettings } | { violations: FieldViolation[] } {
  const next: ScanAlertSettings = {
    ...current,
    ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)),
  };
  const v: FieldViolation[] = [];
  intIn(v, 'clone_window_hours', next.cloneWindowHours, 1, 720);
  intIn(v, 'clone_visitors_per_day', next.cloneVisitorsPerDay, 1, 10_000);
  intIn(v, 'alerts_per_minute', next.alertsPerMinute, 1, 1_000);
  if (next.withdrawnIgnored.length > 20) v.push({ field: 'withdrawn_ignored', message: 'must hold at most 20 names' });
  next.withdrawnIgnored.forEach((name, i) => {
    if (!statusName.test(name))
      v.push({
        field: `withdrawn_ignored[${i}]`,
        message: 'must be a status or reason name: a lowercase letter, then up to 39 lowercase letters, digits or underscores',
      });
    else if (name === 'active' || name === 'inactive') v.push({ field: `withdrawn_ignored[${i}]`, message: `${name} is a unit in use, never withdrawn` });
  });
  if (v.length > 0) return { violations: v };
  return { settings: { ...next, withdrawnIgnored: [...new Set(next.withdrawnIgnored)].sort() } };
}
