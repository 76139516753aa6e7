/**
 * Brand resolver domains: a brand may serve its identities from a hostname of its own
 * (`https://id.brand.example/01/{gtin}/21/{serial}`) instead of `{PUBLIC_BASE_URL}/r/{slug}`.
 * These are the rules for the name itself and for reading the host a request was sent to.
 */

import { domainToUnicode } from 'node:url';
import type { FieldViolation } from './errors.ts';

/** Longest hostname (RFC 1035, without the trailing dot). */
export const maxDomainLength = 253;

const label = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)$/;

/** Hosts the service answers on besides its public host, which no brand may claim. */
export interface ReservedHosts {
  /** Hosts the control plane answers on (`CONTROL_PLANE_HOSTS`: in-cluster service names, an API host). */
  readonly controlPlaneHosts?: readonly string[];
  /** Zones under the public host whose subdomains brands may claim (`BRAND_DOMAIN_DELEGATED_ZONES`). */
  readonly delegatedZones?: readonly string[];
}

/**
 * What is wrong with `domain` as a brand's resolver domain (empty when nothing is): a lower-case
 * hostname of at least two labels in IDNA A-label (punycode) form, without port, scheme, path or
 * trailing dot, not an IP address, and not a host the service itself answers on: `ownHost` (the
 * public host), a `localhost` name, one of `reserved.controlPlaneHosts`, or a subdomain of the
 * public host outside `reserved.delegatedZones`. The empty string is valid: it removes the domain.
 * Violations name the field `domain`.
 */
export function resolverDomainViolations(domain: string, ownHost: string, reserved: ReservedHosts = {}): FieldViolation[] {
  if (domain === '') return [];
  const fail = (message: string): FieldViolation[] => [{ field: 'domain', message }];
  if (domain.length > maxDomainLength) return fail(`must be at most ${maxDomainLength} characters`);
  if (domain.includes('://') || domain.includes('/')) return fail('must be a hostname only, without scheme or path (id.brand.example)');
  if (domain.startsWith('[') || (/^[0-9a-f:.]+$/i.test(domain) && domain.includes(':'))) return fail('must be a hostname, not an IP address');
  if (domain.includes(':')) return fail('must be a hostname without port');
  if (/[^\x00-\x7f]/.test(domain)) return fail('must be in IDNA A-label (punycode) form, e.g. xn--bcher-kva.example for bücher.example');
  if (domain !== domain.toLowerCase()) return fail('must be lower-case');
  if (domain.endsWith('.')) return fail('must not end with a dot');
  const labels = domain.split('.');
  if (labels.length < 2) return fail('must be a fully qualified hostname with at least two labels (id.brand.example)');
  if (labels.every((l) => /^[0-9]+$/.test(l))) return fail('must be a hostname, not an IP address');
  if (labels.some((l) => !label.test(l))) return fail('must be labels of 1 to 63 letters, digits and inner hyphens, separated by dots');
  if (/^[0-9]+$/.test(labels.at(-1)!)) return fail('must end with a top-level domain, not a number');
  if (labels.some((l) => l.slice(2, 4) === '--' && !l.startsWith('xn--')))
    return fail('must not have hyphens in the third and fourth characters of a label unless it is an A-label (xn--)');
  // An A-label must decode to a U-label (xn--a is not punycode of anything and stays as it is).
  if (labels.some((l) => l.startsWith('xn--') && domainToUnicode(l) === l))
    return fail('must be in IDNA A-label (punycode) form; an xn-- label here does not decode');
  const own = normalizeHost(ownHost);
  if (domain === own) return fail("must not be the service's own public host");
  if (labels.at(-1) === 'localhost' || (reserved.controlPlaneHosts ?? []).some((h) => normalizeHost(h) === domain)) {
    return fail('must not be a host the service itself answers on (CONTROL_PLANE_HOSTS)');
  }
  const under = (zone: string) => domain.endsWith(`.${zone}`);
  if (own !== '' && under(own) && !(reserved.delegatedZones ?? []).some((zone) => under(normalizeHost(zone)))) {
    return fail(`must not be a subdomain of the service's public host (${own}) outside a zone delegated to brands (BRAND_DOMAIN_DELEGATED_ZONES)`);
  }
  return [];
}

/** The resolver base URL of a brand with its own domain: `https://{domain}` (TLS terminates at the ingress). */
export function brandDomainBaseUrl(domain: string): string {
  return `https://${domain}`;
}

/**
 * The hostname a request was sent to, from its `Host` header (or HTTP/2 `:authority`): lower-cased,
 * without port and trailing dot; '' when absent. An IPv6 literal keeps its brackets.
 */
export function normalizeHost(host: string | undefined): string {
  if (host === undefined || host === '') return '';
  let h = host.toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  if (colon >= 0) h = h.slice(0, colon);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}
