import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { webhookMaxResponseBytes, webhookTimeoutMs, webhookUrlViolations } from '@mint/domain';

/** One POST of a delivery. */
export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What a POST gave: an HTTP status (null when no answer came), its duration and why it failed. */
export interface WebhookResponse {
  readonly status: number | null;
  readonly durationMs: number;
  /** Why no answer came (refused address, timeout, network error), or the start of a non-2xx answer's body. */
  readonly error: string | null;
}

/** Sends one delivery; never throws. */
export type WebhookSend = (request: WebhookRequest) => Promise<WebhookResponse>;

/** Where deliveries may go. */
export interface WebhookNetworkPolicy {
  /** Allow `http://` to loopback hosts and loopback addresses (dev mode and tests). */
  readonly allowLoopback: boolean;
  /** Addresses or CIDR ranges allowed although private (on-premises receivers, tests): `10.0.0.5`, `10.1.0.0/16`, `fd00::/8`. */
  readonly allowedAddresses: readonly string[];
  /** Time limit of one attempt, 10 s by default. */
  readonly timeoutMs?: number;
  /** Resolves a host name to every address it has; the system resolver (`dns.lookup`) by default (tests map names here). */
  readonly resolve?: (host: string) => Promise<readonly { readonly address: string; readonly family: number }[]>;
}

/** IPv4 ranges no delivery goes to unless allowed: private, loopback, link-local, shared, unspecified, multicast and reserved. */
const refusedIpv4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refusedIpv4.addSubnet(net, prefix, 'ipv4');
/**
 * IPv6 ranges refused whole: IPv4-compatible `::/96` (deprecated; holds `::` and `::1`), discard-only,
 * unique local, site-local `fec0::/10` (deprecated), link-local, multicast, NAT64 local-use
 * `64:ff9b:1::/48` and documentation. The forms that carry an IPv4 address are judged by it ({@link embeddedIpv4}).
 */
const refusedIpv6 = new BlockList();
for (const [net, prefix] of [
  ['::', 96],
  ['100::', 64],
  ['fc00::', 7],
  ['fec0::', 10],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b:1::', 48],
  ['2001:db8::', 32],
] as const)
  refusedIpv6.addSubnet(net, prefix, 'ipv6');
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The message of a refused address: it never names the address (a name's resolved address is the operator's, not the brand's). */
export const refusedAddressMessage = 'a refused address (private, loopback, link-local or reserved)';

/**
 * The IPv4 addresses an IPv6 address embeds or translates to, whatever its form: IPv4-mapped
 * `::ffff:0:0/96`, SIIT `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16` (bits 16-47) and
 * Teredo `2001::/32` (the server, and the client address stored inverted in the last 32 bits).
 */
function embeddedIpv4(bytes: readonly number[]): string[] {
  const v4 = (at: number, invert = false) =>
    bytes
      .slice(at, at + 4)
      .map((b) => (invert ? b ^ 0xff : b))
      .join('.');
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return [v4(12)];
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return [v4(12)];
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12)) return [v4(12)];
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return [v4(2)];
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && zero(2, 4)) return [v4(4), v4(12, true)];
  return [];
}

/** Parses `ip` or `ip/prefix` entries into a block list; throws naming a malformed entry. */
export function addressAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
    if (family === 0 || !Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128)) throw new Error(`"${entry}" is not an address or CIDR range`);
    list.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

/**
 * Why `address` may not receive deliveries ({@link refusedAddressMessage}), or null when it may: an
 * address in a refused range, or an IPv6 address embedding or translating to a refused IPv4 address.
 * `allowLoopback` and `allowed` lift the rule for the address itself (and the IPv4 address of an
 * IPv4-mapped one); anything that is not an address is refused.
 */
export function addressRefusal(address: string, allowLoopback: boolean, allowed: BlockList): string | null {
  const ip = address.split('%', 1)[0]!;
  const family = isIP(ip);
  if (family === 0) return refusedAddressMessage;
  const exempt = (a: string, type: 'ipv4' | 'ipv6') => (allowLoopback && loopback.check(a, type)) || allowed.check(a, type);
  if (family === 4) return exempt(ip, 'ipv4') || !refusedIpv4.check(ip, 'ipv4') ? null : refusedAddressMessage;
  if (exempt(ip, 'ipv6')) return null;
  const parsed = ipaddr.IPv6.parse(ip);
  if (parsed.isIPv4MappedAddress()) return addressRefusal(parsed.toIPv4Address().toString(), allowLoopback, allowed);
  if (refusedIpv6.check(ip, 'ipv6')) return refusedAddressMessage;
  return embeddedIpv4(parsed.toByteArray()).some((v4) => refusedIpv4.check(v4, 'ipv4')) ? refusedAddressMessage : null;
}

/**
 * A sender that POSTs with a time limit, follows no redirect, reads at most 4 KiB of an answer,
 * and checks at delivery time every address the host resolves to: one refused address refuses the
 * attempt, and the connection goes to the checked address (no second resolution to rebind).
 */
export function createWebhookSender(policy: WebhookNetworkPolicy): WebhookSend {
  const allowed = addressAllowList(policy.allowedAddresses);
  const timeoutMs = policy.timeoutMs ?? webhookTimeoutMs;
  const resolve = policy.resolve ?? ((host: string) => lookup(host, { all: true }));
  return async (request) => {
    const started = performance.now();
    const failed = (error: string): WebhookResponse => ({ status: null, durationMs: Math.round(performance.now() - started), error });
    const violations = webhookUrlViolations(request.url, policy.allowLoopback);
    if (violations.length > 0) return failed(`url refused: ${violations[0]!.message}`);
    const url = new URL(request.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: readonly { address: string; family: number }[];
    try {
      addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await resolve(host);
    } catch {
      return failed(`host ${host} did not resolve`);
    }
    if (addresses.length === 0) return failed(`host ${host} did not resolve`);
    for (const a of addresses) {
      const refusal = addressRefusal(a.address, policy.allowLoopback, allowed);
      if (refusal !== null) return failed(isIP(host) !== 0 ? `address refused: ${refusal}` : `host ${host} resolves to ${refusal}`);
    }
    const pinned = addresses[0]!;
    const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all === true) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
      else callback(null, pinned.address, pinned.family);
    };
    return new Promise<WebhookResponse>((resolve) => {
      let settled = false;
      const finish = (response: WebhookResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(response);
      };
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(
        url,
        {
          method: 'POST',
          lookup: pinnedLookup,
          agent: false,
          headers: {
            ...request.headers,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(request.body)),
            'user-agent': 'minting-webhooks/1',
          },
        },
        (res) => {
          const status = res.statusCode ?? null;
          const chunks: Buffer[] = [];
          let size = 0;
          const done = () => {
            const text = Buffer.concat(chunks).subarray(0, webhookMaxResponseBytes).toString('utf8');
            const ok = status !== null && status >= 200 && status < 300;
            finish({ status, durationMs: Math.round(performance.now() - started), error: ok || text === '' ? null : text.slice(0, 500) });
          };
          res.on('data', (chunk: Buffer) => {
            if (size < webhookMaxResponseBytes) chunks.push(chunk);
            size += chunk.length;
            if (size >= webhookMaxResponseBytes) done();
          });
          res.on('end', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => finish(failed(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => finish(failed(`request failed: ${err.code ?? err.message}`)));
      req.end(request.body);
    });
  };
}
