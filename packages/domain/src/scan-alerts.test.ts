import { describe, expect, it } from 'vitest';
import { createScanRules, type RuleScan } from './scan-alerts.ts';

const scan = (serial: string | null, at = '2026-01-01T10:00:00Z', fields: Partial<RuleScan> = {}): RuleScan => ({
  brandId: 'b1',
  scannedAt: new Date(at),
  gtin: '04006381333931',
  serial,
  unitKnown: false,
  count: 1,
  country: 'DE',
  clientClass: 'bot',
  unitStatus: null,
  outcome: 'resolved',
  ...fields,
});
const types = (events: { eventType: string }[]) => events.map((e) => e.eventType);

describe('the never-issued serial rule', () => {
  it('alerts a serial once a day, again the next day, never for known units or paths without a unit', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100 });
    const now = new Date('2026-01-01T10:00:00Z');
    expect(types(rule.observe([scan('X'), scan('X'), scan('Y', undefined, { unitKnown: true }), scan('Z', undefined, { unitKnown: null })], now))).toEqual([
      'scan_never_issued_serial',
    ]);
    expect(rule.observe([scan('X', '2026-01-01T23:00:00Z')], now)).toEqual([]);
    expect(types(rule.observe([scan('X', '2026-01-02T00:00:01Z')], new Date('2026-01-02T00:00:01Z')))).toEqual(['scan_never_issued_serial']);
  });

  it('reads a batch in time order, so a scan before midnight listed after one past it still alerts', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100 });
    const events = rule.observe([scan('LATE', '2026-01-02T00:05:00Z'), scan('EARLY', '2026-01-01T23:55:00Z')], new Date('2026-01-02T00:06:00Z'));
    expect(events.map((e) => e.payload['serial']).sort()).toEqual(['EARLY', 'LATE']);
  });

  it('counts scans beyond the budget of a minute into one burst alert a minute, flood rows without serials included', () => {
    const rule = createScanRules({ perBrandPerMinute: 2, maxRemembered: 100 });
    const now = new Date('2026-01-01T10:00:10Z');
    const events = rule.observe([scan('A'), scan('B'), scan('C'), scan(null, undefined, { count: 40, country: 'FR' })], now);
    expect(types(events)).toEqual(['scan_never_issued_serial', 'scan_never_issued_serial', 'scan_never_issued_burst']);
    expect(events[2]!.payload).toEqual({
      scans: 41,
      gtins: ['04006381333931'],
      countries: ['DE', 'FR'],
      client_classes: ['bot'],
      minute: '2026-01-01T10:00:00.000Z',
    });
    // The same minute: no second burst. The next minute: a fresh budget; C was never alerted, so it is now.
    expect(rule.observe([scan('D')], new Date('2026-01-01T10:00:50Z'))).toEqual([]);
    expect(types(rule.observe([scan('C'), scan('E'), scan('F')], new Date('2026-01-01T10:01:05Z')))).toEqual([
      'scan_never_issued_serial',
      'scan_never_issued_serial',
      'scan_never_issued_burst',
    ]);
  });
});

describe('the withdrawn unit rule', () => {
  it('alerts a scan of a unit of a voided batch, or in a lifecycle end state, once a day; never a unit in use', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100 });
    const now = new Date('2026-01-01T10:00:00Z');
    const known = (serial: string, fields: Partial<RuleScan>) => scan(serial, undefined, { unitKnown: true, unitStatus: 'active', ...fields });
    const events = rule.observe(
      [
        known('U1', { outcome: 'gone' }),
        known('U1', { outcome: 'gone' }),
        known('U2', { unitStatus: 'decommissioned' }),
        known('U3', {}),
        known('U4', { unitStatus: 'inactive', outcome: 'not_activated' }),
      ],
      now,
    );
    expect(events.map((e) => [e.eventType, e.entityId, e.payload['unit_status'], e.payload['outcome']])).toEqual([
      ['scan_withdrawn_unit', '04006381333931 U1', 'active', 'gone'],
      ['scan_withdrawn_unit', '04006381333931 U2', 'decommissioned', 'resolved'],
    ]);
  });
});

describe('the clone rule', () => {
  const known = (serial: string, at: string, country: string | null, visitor: string | null = null) =>
    scan(serial, at, { unitKnown: true, unitStatus: 'active', country, visitor });

  it('suspects a unit seen from two countries within the window, once a day; not two countries a window apart', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100, cloneWindowHours: 24, cloneVisitorsPerDay: 20 });
    const now = new Date('2026-01-02T10:00:00Z');
    expect(rule.observe([known('C1', '2026-01-01T08:00:00Z', 'DE'), known('C2', '2026-01-01T08:00:00Z', 'DE')], now)).toEqual([]);
    const events = rule.observe(
      [known('C1', '2026-01-01T20:00:00Z', 'BR'), known('C1', '2026-01-01T21:00:00Z', 'US'), known('C2', '2026-01-02T09:00:00Z', 'FR')],
      now,
    );
    expect(events.map((e) => [e.eventType, e.entityId, e.payload['reason'], e.payload['countries']])).toEqual([
      ['scan_clone_suspected', '04006381333931 C1', 'countries', ['BR', 'DE']],
    ]);
  });

  it('suspects a unit scanned by more distinct visitors in a day than the threshold', () => {
    const rule = createScanRules({ perBrandPerMinute: 10, maxRemembered: 100, cloneWindowHours: 24, cloneVisitorsPerDay: 3 });
    const now = new Date('2026-01-01T10:00:00Z');
    const visits = ['v1', 'v2', 'v3', 'v3', 'v4'].map((v) => known('K1', '2026-01-01T09:00:00Z', 'DE', v));
    expect(rule.observe(visits.slice(0, 4), now)).toEqual([]);
    expect(rule.observe(visits.slice(4), now).map((e) => [e.payload['reason'], e.payload['visitors_today']])).toEqual([['visitors', 4]]);
  });
});
