import { describe, expect, it } from 'vitest';
import { classifyUserAgent, countryOf, createVisitorHasher, validateIngestScan, type IngestScanInput } from './scan-ledger.ts';

describe('client classes', () => {
  it('classifies browsers, in-app views and app HTTP stacks, bots and the rest', () => {
    expect(
      classifyUserAgent(
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
      ),
    ).toBe('browser');
    expect(
      classifyUserAgent(
        'Mozilla/5.0 (Linux; Android 14; Pixel 8; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0 Mobile Safari/537.36 Instagram 300.0',
      ),
    ).toBe('app');
    expect(classifyUserAgent('okhttp/4.12.0')).toBe('app');
    expect(classifyUserAgent('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBe('bot');
    expect(classifyUserAgent('curl/8.4.0')).toBe('bot');
    expect(classifyUserAgent(null)).toBe('other');
    expect(classifyUserAgent('')).toBe('other');
  });

  it('keeps a country only as an ISO alpha-2 code, never the unknown or Tor codes', () => {
    expect([countryOf('de'), countryOf(' FR '), countryOf('XX'), countryOf('T1'), countryOf('DEU'), countryOf('203.0.113.7'), countryOf(null)]).toEqual([
      'DE',
      'FR',
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('visitor hashes', () => {
  it('are equal for one visitor within a UTC day and unrelated across days; the address is not in them', () => {
    let draws = 0;
    const hasher = createVisitorHasher((size) => new Uint8Array(size).fill(++draws));
    const day1 = hasher.hash('203.0.113.7', 'UA', new Date('2026-01-01T00:00:00Z'));
    expect(hasher.hash('203.0.113.7', 'UA', new Date('2026-01-01T23:59:59Z'))).toBe(day1);
    expect(hasher.hash('203.0.113.8', 'UA', new Date('2026-01-01T12:00:00Z'))).not.toBe(day1);
    expect(hasher.hash('203.0.113.7', 'UA', new Date('2026-01-02T00:00:00Z'))).not.toBe(day1);
    expect(draws).toBe(2);
    expect(day1).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('ingested scans', () => {
  const row: IngestScanInput = {
    scannedAt: new Date('2026-01-01T00:00:00Z'),
    kind: 'serial',
    gtin: '4006381333931',
    identifier: 'S1',
    lot: null,
    outcome: 'resolved',
    representation: 'redirect',
    linkType: null,
    country: 'de',
    clientClass: 'browser',
    visitor: null,
    count: 1,
  };
  const now = new Date('2026-01-02T00:00:00Z');

  it('normalises a good row (GTIN-14, country upper case)', () => {
    expect(validateIngestScan(row, now)).toMatchObject({ scan: { gtin: '04006381333931', country: 'DE' } });
  });

  it('names every bad field, and refuses an address as a visitor', () => {
    const result = validateIngestScan({ ...row, gtin: '4006381333932', country: 'Germany', visitor: '203.0.113.7', kind: 'guess', count: 0 }, now);
    expect('violations' in result ? result.violations.map((v) => v.field) : []).toEqual(['kind', 'gtin', 'country', 'visitor', 'count']);
    expect(validateIngestScan({ ...row, scannedAt: new Date('2026-01-03T00:00:00Z') }, now)).toEqual({
      violations: [{ field: 'scanned_at', message: 'is in the future' }],
    });
  });
});
