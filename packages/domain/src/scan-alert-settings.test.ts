import { describe, expect, it } from 'vitest';
import { createScanRules, type RuleScan } from './scan-alerts.ts';
import { applyScanAlertSettings, defaultScanAlertSettings, type ScanAlertSettings } from './scan-alert-settings.ts';

const known = (brandId: string, serial: string, at: string, country: string, fields: Partial<RuleScan> = {}): RuleScan => ({
  brandId,
  scannedAt: new Date(at),
  gtin: '04006381333931',
  serial,
  unitKnown: true,
  count: 1,
  country,
  clientClass: 'browser',
  unitStatus: 'active',
  outcome: 'resolved',
  ...fields,
});

describe("a brand's scan-alert settings", () => {
  it('apply a patch, keeping what it leaves out, and sort and deduplicate the withdrawn names', () => {
    expect(applyScanAlertSettings(defaultScanAlertSettings, { cloneWindowHours: 2, withdrawnIgnored: ['voided', 'recycled', 'voided'] })).toEqual({
      settings: { ...defaultScanAlertSettings, cloneWindowHours: 2, withdrawnIgnored: ['recycled', 'voided'] },
    });
  });

  it('refuse every bad field by name, in one answer', () => {
    const out = applyScanAlertSettings(defaultScanAlertSettings, {
      cloneWindowHours: 0,
      cloneVisitorsPerDay: 1.5,
      alertsPerMinute: 1_001,
      withdrawnIgnored: ['ok_name', 'Bad', 'inactive'],
    });
    expect('violations' in out && out.violations.map((v) => v.field)).toEqual([
      'clone_window_hours',
      'clone_visitors_per_day',
      'alerts_per_minute',
      'withdrawn_ignored[1]',
      'withdrawn_ignored[2]',
    ]);
  });

  it('change the rules per brand: a 1 h window is no clone for one brand and is for the other (default 24 h)', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100 });
    const narrow: ScanAlertSettings = { ...defaultScanAlertSettings, cloneWindowHours: 1 };
    const settings = new Map([['narrow', narrow]]);
    const scans = ['narrow', 'default'].flatMap((b) => [known(b, 'S', '2026-01-01T08:00:00Z', 'DE'), known(b, 'S', '2026-01-01T12:00:00Z', 'JP')]);
    const events = rule.observe(scans, new Date('2026-01-01T12:00:00Z'), (b) => settings.get(b));
    expect(events.map((e) => [e.brandId, e.eventType])).toEqual([['default', 'scan_clone_suspected']]);
  });

  it('silence a withdrawn state a brand ignores, and every withdrawn alert when the rule is off', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100 });
    const settings = new Map<string, ScanAlertSettings>([
      ['ignores', { ...defaultScanAlertSettings, withdrawnIgnored: ['recycled'] }],
      ['off', { ...defaultScanAlertSettings, withdrawn: false }],
    ]);
    const scans = ['ignores', 'off', 'default'].flatMap((b) => [
      known(b, 'R', '2026-01-01T08:00:00Z', 'DE', { unitStatus: 'recycled' }),
      known(b, 'V', '2026-01-01T08:00:00Z', 'DE', { outcome: 'gone' }),
    ]);
    const events = rule.observe(scans, new Date('2026-01-01T08:00:00Z'), (b) => settings.get(b));
    expect(events.map((e) => [e.brandId, e.payload['serial']])).toEqual([
      ['ignores', 'V'],
      ['default', 'R'],
      ['default', 'V'],
    ]);
  });
});
