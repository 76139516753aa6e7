import { describe, expect, it } from 'vitest';
import { decodeEdgeScan, encodeEdgeScan, purgeKeyOf, surrogateKeysOf } from './edge-cache.ts';
import { isUnavailableError, unavailableRetryAfter, UnavailableError } from './errors.ts';

const brand = '0f0777dd-8d31-4ff5-8b9f-dfe679d3d05b';

describe('surrogate keys and purges', () => {
  it('purges a GTIN change by the GTIN key, a brand-level or domain change by the brand key, both among the answer keys', () => {
    const keys = surrogateKeysOf(brand, '08342922180005').split(' ');
    expect(keys).toContain(purgeKeyOf(brand, '08342922180005'));
    expect(keys).toContain(purgeKeyOf(brand, ''));
    expect(keys).toContain(purgeKeyOf(brand, null));
    expect(keys).not.toContain(purgeKeyOf(brand, '08342922180012'));
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9-]+$/);
  });
});

describe('the scan of a cached answer', () => {
  it('round-trips a lot scan with an odd lot code and a GTIN scan without link type', () => {
    const lot = {
      brandId: brand,
      kind: 'lot',
      gtin: '08342922180005',
      lot: 'A/1 b&c=%',
      outcome: 'resolved',
      representation: 'redirect',
      linkType: 'gs1:pip',
    } as const;
    expect(encodeEdgeScan(lot)).toMatch(/^[\x21-\x7e]+$/);
    expect(decodeEdgeScan(encodeEdgeScan(lot))).toEqual(lot);
    const gtin = { brandId: brand, kind: 'gtin', gtin: '08342922180005', lot: null, outcome: 'resolved', representation: 'linkset', linkType: null } as const;
    expect(decodeEdgeScan(encodeEdgeScan(gtin))).toEqual(gtin);
  });

  it('refuses a value that is not one (a unit, a lot without its code, missing fields)', () => {
    expect(decodeEdgeScan('b=x&k=serial&g=1&o=resolved&r=redirect')).toBeNull();
    expect(decodeEdgeScan('b=x&k=lot&g=1&o=resolved&r=redirect')).toBeNull();
    expect(decodeEdgeScan('k=gtin&g=1')).toBeNull();
    expect(decodeEdgeScan('')).toBeNull();
  });
});

describe('isUnavailableError', () => {
  it('knows a refused or ended connection, a shutting-down server and the error itself, through causes', () => {
    expect(isUnavailableError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isUnavailableError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isUnavailableError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailableError(new Error('query failed', { cause: Object.assign(new Error('x'), { code: '08006' }) }))).toBe(true);
    expect(isUnavailableError(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'all failed'))).toBe(true);
    expect(unavailableRetryAfter(new UnavailableError('down', 2.5))).toBe(3);
  });

  it('leaves other errors alone (a constraint, a syntax error, a plain bug)', () => {
    expect(isUnavailableError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isUnavailableError(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isUnavailableError(new TypeError('x is undefined'))).toBe(false);
    expect(isUnavailableError('ECONNREFUSED')).toBe(false);
  });
});
