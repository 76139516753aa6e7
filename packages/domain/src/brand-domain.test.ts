import { describe, expect, it } from 'vitest';
import { brandDomainBaseUrl, normalizeHost, resolverDomainViolations } from './brand-domain.ts';

const message = (domain: string) => resolverDomainViolations(domain, 'mint.example')[0]?.message ?? null;

describe('resolverDomainViolations', () => {
  it('accepts lower-case hostnames, A-labels and the empty string (removal)', () => {
    for (const ok of ['id.brand.example', 'xn--bcher-kva.example', 'a.b.c.example', 'id-1.brand.example', '']) expect(message(ok), ok).toBeNull();
  });

  it('refuses, naming the field domain with the reason', () => {
    const cases: [string, RegExp][] = [
      ['ID.Brand.example', /lower-case/],
      ['id.brand.example:8443', /without port/],
      ['https://id.brand.example', /without scheme or path/],
      ['id.brand.example/r', /without scheme or path/],
      ['192.168.1.10', /not an IP address/],
      ['[::1]', /not an IP address/],
      ['::1', /not an IP address/],
      ['bücher.example', /A-label \(punycode\)/],
      ['localhost', /at least two labels/],
      ['id.brand.example.', /end with a dot/],
      ['-id.brand.example', /inner hyphens/],
      ['id..example', /inner hyphens/],
      ['id.brand.123', /top-level domain/],
      ['ab--c.example', /A-label/],
      ['xn--a.example', /does not decode/],
      ['mint.example', /own public host/],
      [`${'a'.repeat(250)}.example`, /at most 253/],
    ];
    for (const [domain, reason] of cases) {
      const violations = resolverDomainViolations(domain, 'MINT.example:443');
      expect(violations.map((v) => v.field), domain).toEqual(['domain']);
      expect(violations[0]!.message, domain).toMatch(reason);
    }
  });
});

describe('normalizeHost', () => {
  it('lower-cases and drops the port and a trailing dot', () => {
    expect(normalizeHost('ID.Brand.Example:8080')).toBe('id.brand.example');
    expect(normalizeHost('id.brand.example.')).toBe('id.brand.example');
    expect(normalizeHost('[::1]:80')).toBe('[::1]');
    expect(normalizeHost(undefined)).toBe('');
  });
  it('builds the https base URL', () => expect(brandDomainBaseUrl('id.brand.example')).toBe('https://id.brand.example'));
});
