import type { HttpRequest } from './types.ts';
import { describe, expect, it } from 'vitest';
import { clientAddressOf } from './client-address.ts';

const request = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, headers }) as unknown as HttpRequest;

describe('clientAddressOf', () => {
  const behindProxies = clientAddressOf(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);

  it('is the TCP peer when no proxy is trusted or the peer is not one, whatever the forwarding headers say', () => {
    expect(clientAddressOf([])(request('198.51.100.1', { 'x-forwarded-for': '203.0.113.9' }))).toBe('198.51.100.1');
    expect(behindProxies(request('198.51.100.1', { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=203.0.113.8' }))).toBe('198.51.100.1');
    expect(behindProxies(request('::ffff:198.51.100.1'))).toBe('198.51.100.1');
  });

  it('walks X-Forwarded-For from the right past trusted proxies; a forged left part does not count', () => {
    expect(behindProxies(request('10.1.2.3', { 'x-forwarded-for': '1.1.1.1, 203.0.113.9, 10.4.5.6' }))).toBe('203.0.113.9');
    expect(behindProxies(request('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }))).toBe('203.0.113.9');
    // Every hop a trusted proxy: the left-most one.
    expect(behindProxies(request('10.1.2.3', { 'x-forwarded-for': '10.9.9.9, 10.4.5.6' }))).toBe('10.9.9.9');
    // No header: the proxy itself.
    expect(behindProxies(request('10.1.2.3'))).toBe('10.1.2.3');
  });

  it('reads RFC 7239 Forwarded (quoted IPv6 with port, IPv4 with port) and stops at a hop that is not an address', () => {
    expect(behindProxies(request('10.1.2.3', { forwarded: 'for="[2001:db8::9]:4711";proto=https, for=10.4.5.6' }))).toBe('2001:db8::9');
    expect(behindProxies(request('10.1.2.3', { forwarded: 'for=192.0.2.43:47011' }))).toBe('192.0.2.43');
    expect(behindProxies(request('10.1.2.3', { forwarded: 'for=unknown, for=10.4.5.6' }))).toBe('10.4.5.6');
    expect(behindProxies(request('fd00::5', { forwarded: 'for=_hidden' }))).toBe('fd00::5');
  });
});
