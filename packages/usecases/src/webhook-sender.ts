import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
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
}

/** Ranges no delivery goes to unless allowed: private, loopback, link-local, shared, unspecified, multicast and reserved. */
const refused = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) refused.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) refused.addSubnet(net, prefix, 'ipv6');
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) as its IPv4 form. */
const unmapped = (address: string): string => address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;

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

/** Why `address` may not receive deliveries under `policy`, or null when it may. */
export function addressRefusal(address: string, allowLoopback: boolean, allowed: BlockList): string | null {
  const ip = unmapped(address);
  const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  if (allowLoopback && loopback.check(ip, type)) return null;
  if (allowed.check(ip, type)) return null;
  return refused.check(ip, type) ? `address ${ip} is private, loopback or link-local` : null;
}

/**
 * A sender that POSTs with a time limit, follows no redirect, reads at most 4 KiB of an answer,
 * and checks at delivery time every address the host resolves to: one refused address refuses the
 * attempt, and the connection goes to the checked address (no second resolution to rebind).
 */
export function createWebhookSender(policy: WebhookNetworkPolicy): WebhookSend {
  const allowed = addressAllowList(policy.allowedAddresses);
  const timeoutMs = policy.timeoutMs ?? webhookTimeoutMs;
  return async (request) => {
    const started = performance.now();
    const failed = (error: string): WebhookResponse => ({ status: null, durationMs: Math.round(performance.now() - started), error });
    const violations = webhookUrlViolations(request.url, policy.allowLoopback);
    if (violations.length > 0) return failed(`url refused: ${violations[0]!.message}`);
    const url = new URL(request.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: { address: string; family: number }[];
    try {
      addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
    } catch {
      return failed(`host ${host} did not resolve`);
    }
    if (addresses.length === 0) return failed(`host ${host} did not resolve`);
    for (const a of addresses) {
      const refusal = addressRefusal(a.address, policy.allowLoopback, allowed);
      if (refusal !== null) return failed(refusal);
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
      const req = client.request(url, {
        method: 'POST', lookup: pinnedLookup, agent: false,
        headers: { ...request.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(request.body)), 'user-agent': 'minting-webhooks/1' },
      }, (res) => {
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
      });
      const timer = setTimeout(() => finish(failed(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => finish(failed(`request failed: ${err.code ?? err.message}`)));
      req.end(request.body);
    });
  };
}
