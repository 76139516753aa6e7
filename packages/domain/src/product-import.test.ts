import { describe, expect, it } from 'vitest';
import { finishImport, importEnumHint, importEnumValue, importHeaderViolations, startImport } from './product-import.ts';

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

describe('enum cells', () => {
  it('read a value in any case, as the Products table shows it (active) or as the API writes it (ACTIVE)', () => {
    for (const cell of ['active', 'ACTIVE', 'Active', ' active ']) expect(importEnumValue('commercial_status', cell)).toBe('ACTIVE');
    expect(importEnumValue('mint_readiness_status', 'not_ready')).toBe('NOT_READY');
    expect(importEnumValue('mint_readiness_status', 'ready')).toBe('READY');
  });

  it('leave a cell that names no value as it is, and the hint lists the values', () => {
    expect(importEnumValue('commercial_status', 'live')).toBe('live');
    expect(importEnumValue('mint_readiness_status', 'NOT READY')).toBe('NOT READY');
    expect(importEnumHint('commercial_status')).toBe('must be one of draft, active, suspended, discontinued (in any case)');
    expect(importEnumHint('mint_readiness_status')).toBe('must be one of not_ready, ready (in any case)');
  });
});

describe('import moves', () => {
  it('starts from QUEUED (or restarts a PROCESSING one) and finishes only from PROCESSING', () => {
    expect(startImport()).toEqual({ from: ['QUEUED', 'PROCESSING'], to: 'PROCESSING' });
    expect(finishImport('COMPLETED')).toEqual({ from: ['PROCESSING'], to: 'COMPLETED' });
  });
});
