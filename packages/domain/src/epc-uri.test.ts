import { describe, expect, it } from 'vitest';
import { ssccOfEpc, unitOfEpc } from './epc-uri.ts';

describe('EPCs of captured events', () => {
  it("read a unit from a Digital Link URI, the service's own /u/ URI and an SGTIN URN", () => {
    expect(unitOfEpc('https://id.example/01/09506000134352/21/A%2F1')).toEqual({ gtin14: '09506000134352', serial: 'A/1' });
    expect(unitOfEpc('https://id.example/01/9506000134352/21/X')).toEqual({ gtin14: '09506000134352', serial: 'X' });
    expect(unitOfEpc('https://r.example/brand/u/TOKEN1')).toEqual({ gtin14: null, serial: 'TOKEN1' });
    // The standard's example 9.6.1: company prefix 0614141, indicator 1, item reference 07346.
    expect(unitOfEpc('urn:epc:id:sgtin:0614141.107346.2017')).toEqual({ gtin14: '10614141073464', serial: '2017' });
    expect(unitOfEpc('urn:epc:id:sgln:0614141.07346.1234')).toBeNull();
    expect(unitOfEpc('https://id.example/00/106141412345678908')).toBeNull();
  });

  it('read a container from a Digital Link URI and an SSCC URN', () => {
    expect(ssccOfEpc('https://id.example/00/106141412345678908')).toBe('106141412345678908');
    expect(ssccOfEpc('urn:epc:id:sscc:0614141.1234567890')).toBe('106141412345678908');
    expect(ssccOfEpc('urn:epc:id:sscc:0614141.12345')).toBeNull();
  });
});
