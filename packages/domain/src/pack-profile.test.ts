import { describe, expect, it } from 'vitest';
import { IllegalStateError, InvalidInputError } from './errors.ts';
import { defaultLabelLayout, layoutViolations, maxLabelPackUnits, resolvePackProfile, type PackBatchFacts, type PackProfileInput } from './pack-profile.ts';

const serial: PackBatchFacts = { status: 'minted', identityMode: 'serial', mintedQuantity: 1_000_000, gtin: '09506000134352' };
const input = (over: Partial<PackProfileInput> = {}): PackProfileInput => ({
  formats: ['csv'],
  seqFrom: null,
  seqTo: null,
  symbology: null,
  layout: null,
  ...over,
});
const fields = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidInputError) return error.violations.map((v) => v.field);
    throw error;
  }
  return [];
};

describe('resolvePackProfile', () => {
  it('fills the defaults: QR, A4 3 x 8 at 203 dpi, the whole batch, formats in canonical order without repeats', () => {
    expect(resolvePackProfile(input({ formats: ['epcis', 'csv', 'epcis'] }), serial)).toEqual({
      formats: ['csv', 'epcis'],
      seqFrom: null,
      seqTo: null,
      symbology: 'qr',
      layout: defaultLabelLayout,
    });
  });

  it('holds SVG and PDF packs to 100,000 units: a larger range is refused on formats, a range of exactly 100,000 passes', () => {
    expect(fields(() => resolvePackProfile(input({ formats: ['svg'] }), serial))).toEqual(['formats']);
    expect(fields(() => resolvePackProfile(input({ formats: ['pdf'], seqFrom: 1, seqTo: maxLabelPackUnits + 1 }), serial))).toEqual(['formats']);
    expect(resolvePackProfile(input({ formats: ['pdf', 'svg'], seqFrom: 900_001, seqTo: 1_000_000 }), serial).formats).toEqual(['svg', 'pdf']);
    expect(resolvePackProfile(input({ formats: ['zpl', 'epcis'] }), serial).formats).toEqual(['zpl', 'epcis']);
  });

  it('refuses label formats for a product without a GTIN, and a range on a lot batch', () => {
    expect(fields(() => resolvePackProfile(input({ formats: ['zpl'] }), { ...serial, gtin: null }))).toEqual(['formats']);
    expect(fields(() => resolvePackProfile(input({ seqTo: 3 }), { ...serial, identityMode: 'batch' }))).toEqual(['seq_to']);
  });

  it('is a failed precondition for a voided or draft batch, before any field is looked at', () => {
    expect(() => resolvePackProfile(input({ formats: ['gif'] }), { ...serial, status: 'voided' })).toThrow(IllegalStateError);
    expect(() => resolvePackProfile(input(), { ...serial, status: 'draft' })).toThrow(IllegalStateError);
    for (const status of ['minted', 'exported', 'printed', 'applied'] as const)
      expect(resolvePackProfile(input(), { ...serial, status }).formats).toEqual(['csv']);
  });
});

describe('layoutViolations', () => {
  it('accepts a grid that exactly fills the page and refuses one a tenth of a millimetre wider', () => {
    expect(layoutViolations({ ...defaultLabelLayout, columns: 3, labelWidthMm: 70 })).toEqual([]);
    expect(layoutViolations({ ...defaultLabelLayout, columns: 3, labelWidthMm: 70, marginLeftMm: 0.1 }).map((v) => v.field)).toEqual(['layout.columns']);
    expect(layoutViolations({ ...defaultLabelLayout, paper: 'letter', rows: 8 }).map((v) => v.field)).toEqual(['layout.rows']);
    expect(layoutViolations({ ...defaultLabelLayout, columns: 2.5 }).map((v) => v.field)).toEqual(['layout.columns']);
  });
});
