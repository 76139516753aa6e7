// The client address of a request, for the per-address rate limits and the auth-failure lockout:
// the TCP peer, unless the peer is a trusted proxy (`TRUSTED_PROXIES`); then the forwarding
// headers are read from the right, and the client is the right-most address no trusted proxy owns.

import { BlockList, isIP } from 'node:net';
import type { ScanClient } from '@mint/domain';
import type { HttpRequest } from './types.ts';

/** An address without zone, brackets or port, IPv4-mapped IPv6 as IPv4; '' when it is not an address. */
function plainAddress(value: string): string {
  let v = value.trim();
  if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  if (v.startsWith('[')) v = v.slice(1, v.indexOf(']') < 0 ? undefined : v.indexOf(']'));
  else if (v.includes('.') && v.indexOf(':') === v.lastIndexOf(':')) v = v.split(':', 1)[0]!;
  v = v.split('%', 1)[0]!;
  if (v.toLowerCase().startsWith('::ffff:') && isIP(v.slice(7)) === 4) v = v.slice(7);
  return isIP(v) === 0 ? '' : v;
}

/** The hops a request went through as the headers tell them, nearest last: `Forwarded`'s `for=` values, else `X-Forwarded-For`. */
function forwardedHops(req: HttpRequest): string[] {
  const joined = (h: string | string[] | undefined) => (Array.isArray(h) ? h.join(',') : (h ?? ''));
  const forwarded = joined(req.headers.forwarded);
  if (forwarded !== '') {
    return forwarded.split(',').map((element) => {
      const pair = element
        .split(';')
        .map((p) => p.trim())
        .find((p) => p.toLowerCase().startsWith('for='));
      return pair === undefined ? '' : pair.slice(4);
    });
  }
  const xff = joined(req.headers['x-forwarded-for']);
  return xff === '' ? [] : xff.split(',');
}

/** The TCP peer's plain address ('' when unknown). */
function peerOf(req: HttpRequest): string {
  const peer = req.socket?.remoteAddress ?? '';
  return plainAddress(peer) || peer;
}

/** Whether an address is one of `trustedProxies` (addresses or CIDR ranges, already validated). */
function trustedCheck(trustedProxies: readonly string[]): (address: string) => boolean {
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    trusted.addSubnet(address, prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix), family);
  }
  return (address) => trusted.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The scan client function: the client address as {@link clientAddressOf} finds it, the
 * User-Agent, and the value of `countryHeader` (`SCAN_COUNTRY_HEADER`, e.g. `cf-ipcountry`) only
 * when the TCP peer itself is a trusted proxy, which set it; from any other peer the header is
 * ignored, whoever sent it. The country is never derived from an address.
 */
export function scanClientOf(trustedProxies: readonly string[], countryHeader: string | undefined): (req: HttpRequest) => ScanClient {
  const addressOf = clientAddressOf(trustedProxies);
  const header = countryHeader?.toLowerCase();
  const isTrusted = trustedProxies.length === 0 || header === undefined ? null : trustedCheck(trustedProxies);
  return (req) => {
    const agent = req.headers['user-agent'];
    let country: string | null = null;
    if (isTrusted !== null && header !== undefined) {
      const peer = peerOf(req);
      const value = req.headers[header];
      if (peer !== '' && isIP(peer) !== 0 && isTrusted(peer) && typeof value === 'string') country = value;
    }
    return { address: addressOf(req), userAgent: typeof agent === 'string' ? agent : null, country };
  };
}

/**
 * The client address function for `trustedProxies` (addresses or CIDR ranges, already validated):
 * the TCP peer when it is not trusted or the list is empty (the forwarding headers are then
 * ignored, whoever sent them); otherwise the right-most forwarded address that is not a trusted
 * proxy. A hop that is not an address (`unknown`, an obfuscated name) ends the walk at the last
 * trusted hop. '' when the peer is unknown (in-process calls).
 */
export function clientAddressOf(trustedProxies: readonly string[]): (req: HttpRequest) => string {
  if (trustedProxies.length === 0) return peerOf;
  const isTrusted = trustedCheck(trustedProxies);
  return (req) => {
    let client = peerOf(req);
    if (client === '' || isIP(client) === 0 || !isTrusted(client)) return client;
    const hops = forwardedHops(req);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plainAddress(hops[i]!);
      if (hop === '') return client;
      client = hop;
      if (!isTrusted(hop)) return client;
    }
    return client;
  };
}
