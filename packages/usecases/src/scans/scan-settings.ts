import { appendEvents, findScanAlertSettings, lockSuspectUnit, saveScanAlertSettings, unmarkUnitSuspect, unitOfWork, transaction } from '@mint/db';
import {
  applyScanAlertSettings,
  assertValid,
  defaultScanAlertSettings,
  InvalidInputError,
  isUuid,
  normalizeGtin,
  NotFoundError,
  type FieldViolation,
  type ScanAlertSettings,
  type ScanAlertSettingsPatch,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import type { ScanAlerts } from './scans.ts';

/** The brand's settings of the scan rules: its own, or the defaults when it set none. */
export async function getScanAlertSettings(ctx: UseCaseContext, brandId: string): Promise<ScanAlertSettings> {
  assertValid(isUuid(brandId) ? [] : [{ field: 'brand_id', message: 'must be a uuid' }]);
  return (await findScanAlertSettings(unitOfWork(ctx.db), [brandId])).get(brandId) ?? defaultScanAlertSettings;
}

/**
 * Changes the brand's settings of the scan rules (fields left undefined keep their value), with a
 * `scan_alert_settings_updated` event, in one transaction; a bad field is refused naming it and
 * nothing is written. This process's rules use the new settings at once (`alerts`), the other
 * processes' within their cache time (10 s).
 */
export async function updateScanAlertSettings(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly patch: ScanAlertSettingsPatch },
  alerts?: ScanAlerts,
): Promise<ScanAlertSettings> {
  assertValid(isUuid(input.brandId) ? [] : [{ field: 'brand_id', message: 'must be a uuid' }]);
  const now = ctx.clock();
  const settings = await transaction(ctx.db, async (em) => {
    const current = (await findScanAlertSettings(em, [input.brandId])).get(input.brandId) ?? defaultScanAlertSettings;
    const applied = applyScanAlertSettings(current, input.patch);
    if ('violations' in applied) throw new InvalidInputError(applied.violations);
    await saveScanAlertSettings(em, input.brandId, applied.settings, now);
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'scan_alert_settings_updated',
        entityType: 'brand',
        entityId: input.brandId,
        actor: actor.id,
        payload: {
          never_issued: applied.settings.neverIssued,
          withdrawn: applied.settings.withdrawn,
          clone: applied.settings.clone,
          burst: applied.settings.burst,
          clone_window_hours: applied.settings.cloneWindowHours,
          clone_visitors_per_day: applied.settings.cloneVisitorsPerDay,
          alerts_per_minute: applied.settings.alertsPerMinute,
          withdrawn_ignored: applied.settings.withdrawnIgnored,
        },
      },
    ]);
    return applied.settings;
  });
  alerts?.invalidate(input.brandId);
  return settings;
}

/** A ClearSuspectUnit call. */
export interface ClearSuspectUnitInput {
  readonly brandId: string;
  /** The unit's GTIN; null or '' for a unit without GTIN (named by its token). */
  readonly gtin: string | null;
  readonly serial: string;
  /** Why the brand clears it (1..500 characters), kept in the event. */
  readonly reason: string;
}

/** What a clear did. */
export interface ClearSuspectUnitOutcome {
  /** False when the unit was not suspect (nothing was written). */
  readonly cleared: boolean;
  /** The rule that had marked it; null when it was not suspect. */
  readonly rule: string | null;
  readonly since: Date | null;
}

/**
 * Clears the suspect mark a scan rule put on the brand's unit, with the brand's reason in a
 * `scan_suspect_cleared` event, in one transaction; its resolver answers are clean again at once
 * (the mark is read with the unit's row). A unit that is not suspect is answered `cleared: false`
 * and nothing is written; a unit the brand does not have is NotFound.
 */
export async function clearSuspectUnit(ctx: UseCaseContext, actor: Actor, input: ClearSuspectUnitInput): Promise<ClearSuspectUnitOutcome> {
  const v: FieldViolation[] = [];
  if (!isUuid(input.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  const gtin = input.gtin === null || input.gtin === '' ? null : normalizeGtin(input.gtin);
  if (input.gtin !== null && input.gtin !== '' && gtin === null)
    v.push({ field: 'gtin', message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' });
  if (input.serial === '' || input.serial.length > 200) v.push({ field: 'serial', message: 'must be 1..200 characters' });
  const reason = input.reason.trim();
  if (reason === '' || reason.length > 500) v.push({ field: 'reason', message: 'must be 1..500 characters' });
  assertValid(v);
  const now = ctx.clock();
  return transaction(ctx.db, async (em) => {
    const state = await lockSuspectUnit(em, input.brandId, gtin, input.serial);
    if (!state.found) throw new NotFoundError(`unit not found: ${gtin === null ? '' : `${gtin} `}${input.serial}`);
    if (state.rule === null) return { cleared: false, rule: null, since: null };
    await unmarkUnitSuspect(em, input.brandId, gtin, input.serial);
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'scan_suspect_cleared',
        entityType: 'scan',
        entityId: `${gtin ?? ''} ${input.serial}`,
        actor: actor.id,
        payload: { gtin, serial: input.serial, rule: state.rule, since: state.since?.toISOString() ?? null, reason },
      },
    ]);
    return { cleared: true, rule: state.rule, since: state.since };
  });
}
