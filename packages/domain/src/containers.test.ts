import { describe, expect, it } from 'vitest';
import {
  companyPrefixViolations,
  containerPackRefusal,
  containerStateAfter,
  gs1CheckDigit,
  isSscc,
  serialReferenceCapacity,
  ssccOf,
  ssccOfUri,
  unitPackRefusal,
} from './containers.ts';

describe('SSCCs', () => {
  it('carry the GS1 check digit of the General Specifications examples', () => {
    // GS1 General Specifications: (00) 1 0614141 123456789 7 and (00) 3 7610425 002123456 9.
    expect(ssccOf(1, '0614141', 123456789)).toBe('106141411234567897');
    expect(ssccOf(3, '7610425', 2123456)).toBe('376104250021234569');
    expect(isSscc('106141411234567897')).toBe(true);
    expect(isSscc('106141411234567890')).toBe(false);
    expect(isSscc('10614141123456789')).toBe(false);
    expect(gs1CheckDigit('0950600013435')).toBe(2);
  });

  it('fill 16 digits between the extension and check digits, whatever the prefix length', () => {
    expect(serialReferenceCapacity('0614141')).toBe(1e9);
    expect(ssccOf(0, '123456789012', 7)).toMatch(/^01234567890120007\d$/);
    expect(() => ssccOf(0, '123456789012', 10_000)).toThrow(/does not fit/);
    expect(() => ssccOf(10, '0614141', 1)).toThrow(/extension digit/);
  });

  it('are read back from a GS1 Digital Link URI only with a valid check digit', () => {
    expect(ssccOfUri('https://example.com/r/acme/00/106141411234567897')).toBe('106141411234567897');
    expect(ssccOfUri('https://example.com/r/acme/00/106141411234567890')).toBeNull();
    expect(ssccOfUri('https://example.com/r/acme/01/09506000134352/21/1')).toBeNull();
  });

  it('need a company prefix of 4 to 12 digits', () => {
    expect(companyPrefixViolations('0614141')).toEqual([]);
    expect(companyPrefixViolations('061')).toHaveLength(1);
    expect(companyPrefixViolations('0614141000000')).toHaveLength(1);
  });
});

describe('packing rules', () => {
  const parent = { id: 'p', ancestors: [] };
  const caseOf = (over: Partial<Parameters<typeof containerPackRefusal>[0]> = {}) => ({
    id: 'c',
    state: 'commissioned' as const,
    parentId: null,
    height: 1,
    ...over,
  });

  it('pack only commissioned units not in a container', () => {
    expect(unitPackRefusal('commissioned', false, null)).toBeNull();
    expect(unitPackRefusal('encoded', false, null)).toBe('not_commissioned');
    expect(unitPackRefusal('commissioned', true, null)).toBe('not_commissioned');
    expect(unitPackRefusal('commissioned', false, 'x')).toBe('already_packed');
  });

  it('refuse a cycle, a second parent, a decommissioned child and nesting deeper than the brand allows', () => {
    expect(containerPackRefusal(caseOf(), parent, 2)).toBeNull();
    expect(containerPackRefusal(caseOf({ id: 'p' }), parent, 2)).toBe('cycle');
    expect(containerPackRefusal(caseOf({ id: 'a' }), { id: 'p', ancestors: ['a'] }, 5)).toBe('cycle');
    expect(containerPackRefusal(caseOf({ parentId: 'q' }), parent, 2)).toBe('already_packed');
    expect(containerPackRefusal(caseOf({ state: 'decommissioned' }), parent, 2)).toBe('decommissioned');
    expect(containerPackRefusal(caseOf({ height: 2 }), parent, 2)).toBe('too_deep');
    expect(containerPackRefusal(caseOf(), { id: 'p', ancestors: ['x'] }, 2)).toBe('too_deep');
  });

  it('move containers with their contents only when decommissioning or reactivating', () => {
    expect(containerStateAfter('decommission', 'commissioned', null, ['stolen'])).toBe('decommissioned');
    expect(containerStateAfter('reactivate', 'decommissioned', 'stolen', ['stolen'])).toBe('commissioned');
    expect(containerStateAfter('reactivate', 'decommissioned', 'destroyed', ['stolen'])).toBeNull();
    expect(containerStateAfter('encode', 'commissioned', null, ['stolen'])).toBeNull();
  });
});
