import { describe, expect, it } from 'vitest';
import { parseUnitQuery } from './unit-search.ts';

describe('parseUnitQuery', () => {
  it('reads a scanned Digital Link URL with a path prefix, a lot and a query string', () => {
    expect(parseUnitQuery(' http://localhost:4000/r/demo/01/05215901722981/10/L1/21/AB%2FC?linkType=all ')).toEqual({ gtin: '05215901722981', serial: 'AB/C' });
    expect(parseUnitQuery('https://id.brand.example/01/9506000134352/21/XYZ')).toEqual({ gtin: '09506000134352', serial: 'XYZ' });
  });

  it('reads an element string and a bare serial', () => {
    expect(parseUnitQuery('(01)09506000134352(21)ABC')).toEqual({ gtin: '09506000134352', serial: 'ABC' });
    expect(parseUnitQuery('6338N216VYG5HC1TYKN')).toEqual({ gtin: null, serial: '6338N216VYG5HC1TYKN' });
  });

  it('names no unit for a URL without one, or nothing', () => {
    expect(parseUnitQuery('https://id.brand.example/01/09506000134352')).toBeNull();
    expect(parseUnitQuery('   ')).toBeNull();
  });
});
