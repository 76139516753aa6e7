import { describe, expect, it } from 'vitest';
import { renewalDelay } from './oidc.ts';

describe('renewalDelay', () => {
  it('renews three quarters into what is left of the token, never sooner than 5 s', () => {
    expect(renewalDelay(1_000_000 + 20_000, 1_000_000)).toBe(15_000);
    expect(renewalDelay(1_000_000 + 3_600_000, 1_000_000)).toBe(2_700_000);
    expect(renewalDelay(1_000_000 + 2_000, 1_000_000)).toBe(5_000);
    expect(renewalDelay(900_000, 1_000_000)).toBe(5_000);
  });
});
