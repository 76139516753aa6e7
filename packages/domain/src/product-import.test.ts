import { describe, expect, it } from 'vitest';
import { finishImport, importHeaderViolations, startImport } from './product-import.ts';

describe('importHeaderViolations', () => {
  it('accepts the columns in any order, optional ones left out', () => {
    expect(importHeaderViolations(['name', 'sku', 'mint_readiness_status', 'commercial_status'])).toEqual([]);
  });

  it('names unknown, repeated and missing columns', () => {
    expect(importHeaderViolations(['sku', 'sku', 'colour', 'name', 'commercial_status']).map((v) => v.message)).toEqual([
      'column "sku" appears twice in the header row',
      'unknown column "colour" in the header row; allowed: sku, name, gtin, commercial_status, mint_readiness_status, passport_url',
      'the header row lacks the required column "mint_readiness_status"',
    ]);
  });
});

describe('import moves', () => {
  it('starts from QUEUED (or restarts a PROCESSING one) and finishes only from PROCESSING', () => {
    expect(startImport()).toEqual({ from: ['QUEUED', 'PROCESSING'], to: 'PROCESSING' });
    expect(finishImport('COMPLETED')).toEqual({ from: ['PROCESSING'], to: 'COMPLETED' });
  });
});
