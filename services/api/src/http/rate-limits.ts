// Rate limits of one API process (rate-limiter-flexible's in-memory limiter, one fixed window per
// key): per credential on the control plane (RPCs and /v1), per client address on the anonymous
// routes (resolver scans, downloads) and on failed authentications. Over a limit a call is
// refused with RateLimitedError: 429 with Retry-After on plain HTTP, resource_exhausted on RPCs.

import { hash } from 'node:crypto';
import { RateLimitedError } from '@mint/domain';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** The limits; 0 turns one off. */
export interface RateLimitSettings {
  /** Control-plane requests (RPCs, /v1) per second of one credential (`RATE_LIMIT_PER_CREDENTIAL`). */
  readonly perCredential: number;
  /** Resolver requests (each a scan event) per second from one client address (`RATE_LIMIT_RESOLVER_PER_ADDRESS`). */
  readonly resolverPerAddress: number;
  /** Pack downloads per minute from one client address (`RATE_LIMIT_DOWNLOADS_PER_ADDRESS`). */
  readonly downloadsPerAddress: number;
  /** Failed authentications per minute from one client address before its credentialed calls are refused (`RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS`). */
  readonly authFailuresPerAddress: number;
}

/** The limits of one API process. */
export interface RateLimits {
  /** Counts one control-plane request of the credential in `authorization` / `x-api-key`; rejects with RateLimitedError over the limit. Nothing is counted without a credential. */
  credential(authorization: string | undefined, apiKey: string | undefined): Promise<void>;
  /** Counts one resolver request of `address`. */
  resolver(address: string): Promise<void>;
  /** Counts one download of `address`. */
  download(address: string): Promise<void>;
  /** Rejects with RateLimitedError while `address` is past its failed-authentication limit. */
  authAllowed(address: string): Promise<void>;
  /** Records a failed authentication of `address`. */
  authFailed(address: string): void;
}

interface Limiter {
  readonly limiter: RateLimiterMemory;
  readonly what: string;
}

const limiterOf = (points: number, duration: number, what: string): Limiter | undefined =>
  points === 0 ? undefined : { limiter: new RateLimiterMemory({ points, duration }), what };

/** Consumes one point of `key`; RateLimitedError naming the limit when none is left. */
async function consume(limit: Limiter | undefined, key: string): Promise<void> {
  if (limit === undefined) return;
  try {
    await limit.limiter.consume(key);
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    throw new RateLimitedError(`too many requests: ${limit.what}; retry after ${Math.max(1, Math.ceil(res.msBeforeNext / 1000))} s`, res.msBeforeNext / 1000);
  }
}

/** A credential's key in the limiter: a digest, so no token or API key is held in the limiter's table. */
const credentialKey = (value: string): string => hash('sha256', value, 'base64url').slice(0, 22);

/** The rate limits of `settings`; each limiter keeps its windows in this process's memory. */
export function createRateLimits(settings: RateLimitSettings): RateLimits {
  const credential = limiterOf(settings.perCredential, 1, `more than ${settings.perCredential} requests per second with this credential (RATE_LIMIT_PER_CREDENTIAL)`);
  const resolver = limiterOf(settings.resolverPerAddress, 1, `more than ${settings.resolverPerAddress} resolver requests per second from this address (RATE_LIMIT_RESOLVER_PER_ADDRESS)`);
  const downloads = limiterOf(settings.downloadsPerAddress, 60, `more than ${settings.downloadsPerAddress} downloads per minute from this address (RATE_LIMIT_DOWNLOADS_PER_ADDRESS)`);
  const failures = settings.authFailuresPerAddress === 0 ? undefined : new RateLimiterMemory({ points: settings.authFailuresPerAddress, duration: 60 });
  const failuresWhat = `more than ${settings.authFailuresPerAddress} failed authentications per minute from this address (RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS)`;
  return {
    credential: (authorization, apiKey) => {
      const value = authorization ?? apiKey;
      return value === undefined || value === '' ? Promise.resolve() : consume(credential, credentialKey(value));
    },
    resolver: (address) => consume(resolver, address),
    download: (address) => consume(downloads, address),
    async authAllowed(address) {
      if (failures === undefined) return;
      const res = await failures.get(address);
      if (res !== null && res.consumedPoints >= settings.authFailuresPerAddress) {
        throw new RateLimitedError(`too many requests: ${failuresWhat}; retry after ${Math.max(1, Math.ceil(res.msBeforeNext / 1000))} s`, res.msBeforeNext / 1000);
      }
    },
    authFailed(address) {
      void failures?.penalty(address);
    },
  };
}

/** Settings that limit nothing (in-process tests and the metrics port). */
export const noRateLimits: RateLimitSettings = { perCredential: 0, resolverPerAddress: 0, downloadsPerAddress: 0, authFailuresPerAddress: 0 };
