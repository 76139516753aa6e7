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
      expect(
        violations.map((v) => v.field),
        domain,
      ).toEqual(['domain']);
      expect(violations[0]!.message, domain).toMatch(reason);
    }
  });

  it('refuses the hosts the service answers on: localhost names, control-plane hosts, subdomains of the public host outside delegated zones', () => {
    const reserved = { controlPlaneHosts: ['mint-api.svc.cluster.local', 'API.mint.example'], delegatedZones: ['brands.mint.example'] };
    const reason = (domain: string) => resolverDomainViolations(domain, 'mint.example', reserved)[0]?.message ?? null;
    expect(reason('api.localhost')).toMatch(/answers on \(CONTROL_PLANE_HOSTS\)/);
    expect(reason('mint-api.svc.cluster.local')).toMatch(/answers on \(CONTROL_PLANE_HOSTS\)/);
    expect(reason('api.mint.example')).toMatch(/answers on \(CONTROL_PLANE_HOSTS\)/);
    expect(reason('id.mint.example')).toMatch(/subdomain of the service's public host \(mint.example\)/);
    expect(reason('brands.mint.example')).toMatch(/subdomain/);
    expect(reason('acme.brands.mint.example')).toBeNull();
    expect(reason('id.other-mint.example')).toBeNull();
    // Without settings: only delegated zones lift the subdomain rule, and there are none.
    expect(message('acme.brands.mint.example')).toMatch(/subdomain/);
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
