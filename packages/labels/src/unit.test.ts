import { describe, expect, it } from 'vitest';
import { bracketedElementString, elementString, hriLines, labelUnitViolations, type LabelUnit } from './unit.ts';

const base = 'https://id.example.com/r/acme';

describe('GS1 texts of a label unit', () => {
  it('lays out serial, lot and lot + serial as element string and HRI lines', () => {
    const serial: LabelUnit = { digitalLink: `${base}/01/09506000134352/21/ABC`, gtin: '09506000134352', serial: 'ABC' };
    const lot: LabelUnit = { digitalLink: `${base}/01/09506000134352/10/L1`, gtin: '09506000134352', lot: 'L1' };
    const both: LabelUnit = { digitalLink: `${base}/01/09506000134352/10/L1/21/ABC`, gtin: '09506000134352', lot: 'L1', serial: 'ABC' };
    expect(elementString(serial)).toBe('010950600013435221ABC');
    expect(elementString(lot)).toBe('010950600013435210L1');
    expect(elementString(both)).toBe('010950600013435210L1\x1d21ABC');
    expect(hriLines(serial)).toEqual(['(01) 09506000134352', '(21) ABC']);
    expect(hriLines(both)).toEqual(['(01) 09506000134352', '(10) L1', '(21) ABC']);
    expect(bracketedElementString({ ...lot, lot: 'L(1)', digitalLink: `${base}/01/09506000134352/10/L(1)` })).toBe('(01)09506000134352(10)L^0401)');
  });

  it('accepts percent-encoded values in the Digital Link', () => {
    expect(labelUnitViolations({ digitalLink: `${base}/01/09506000134352/21/A%25%22B`, gtin: '09506000134352', serial: 'A%"B' })).toEqual([]);
  });

  it('names each bad field', () => {
    expect(labelUnitViolations({ digitalLink: 'ftp://x/01/9506000134352/21/a b', gtin: '9506000134352', serial: 'a b' }).map((v) => v.field)).toEqual([
      'gtin',
      'serial',
    ]);
    expect(labelUnitViolations({ digitalLink: `${base}/01/09506000134352/21/XYZ`, gtin: '09506000134352', serial: 'ABC' }).map((v) => v.field)).toEqual([
      'digital_link',
    ]);
    expect(labelUnitViolations({ digitalLink: 'not a url', gtin: '09506000134352' }).map((v) => v.field)).toEqual(['digital_link']);
  });
});
