import { describe, expect, it } from 'vitest';
import { isPartnerAction, partnerGrantViolations, quotaRefusal } from './partner.ts';

describe('partner grants', () => {
  it('need exactly one of a product or a batch, a quota from 1 and a name', () => {
    const ok = { productId: 'p', mintBatchId: null, quota: 10, name: 'line 1' };
    expect(partnerGrantViolations(ok)).toEqual([]);
    expect(partnerGrantViolations({ ...ok, mintBatchId: 'b' }).map((v) => v.field)).toEqual(['restriction']);
    expect(partnerGrantViolations({ ...ok, productId: null }).map((v) => v.field)).toEqual(['restriction']);
    expect(partnerGrantViolations({ ...ok, quota: 0, name: ' ' }).map((v) => v.field)).toEqual(['quota', 'name']);
    expect(partnerGrantViolations({ ...ok, quota: 1.5 }).map((v) => v.field)).toEqual(['quota']);
  });

  it('refuse a request beyond the quota left, naming it; returns never give quota back', () => {
    expect(quotaRefusal({ quota: 100, allocated: 60 }, 40)).toBeNull();
    expect(quotaRefusal({ quota: 100, allocated: 60 }, 41)).toBe("quantity 41 exceeds the key's remaining quota of 40 (quota 100, 60 allocated)");
  });

  it('let a partner encode, commission, scrap and return, never decommission or reactivate', () => {
    expect(['encode', 'commission', 'scrap', 'return', 'decommission', 'reactivate'].filter((a) => isPartnerAction(a as never))).toEqual([
      'encode',
      'commission',
      'scrap',
      'return',
    ]);
  });
});
