// Rate limits of one API process (rate-limiter-flexible's in-memory limiter, one fixed window per
// key): per credential on the control plane (RPCs and /v1), per client address on the anonymous
// routes (resolver scans, downloads) and on failed authentications. Over a limit a call is
// refused with RateLimitedError: 429 with Retry-After on plain HTTP, resource_exhausted on RPCs.
// The failure lockout of an address holds only credentials not seen to work lately: a client that
// sends bad credentials never locks out the working token or API key of another client behind the
// same address (a NAT, a proxy not listed in TRUSTED_PROXIES).

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
  /**
   * Rejects with RateLimitedError while `address` is past its failed-authentication limit, unless
   * the credentials (`authorization` / `x-api-key`) authenticated within the last {@link workingCredentialTtlMs}.
   */
  authAllowed(address: string, authorization: string | undefined, apiKey: string | undefined): Promise<void>;
  /** Records a failed authentication of `address`. */
  authFailed(address: string): void;
  /** Records that these credentials authenticated (they then pass a lockout of any address for a while). */
  authSucceeded(authorization: string | undefined, apiKey: string | undefined): void;
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

/** How long credentials that authenticated pass an address's failure lockout (refreshed by each success). */
export const workingCredentialTtlMs = 15 * 60_000;
/** Most credentials remembered as working; the least recently successful ones are forgotten first. */
const maxWorkingCredentials = 10_000;

/** The rate limits of `settings`; each limiter keeps its windows in this process's memory. */
export function createRateLimits(settings: RateLimitSettings): RateLimits {
  const credential = limiterOf(
    settings.perCredential,
    1,
    `more than ${settings.perCredential} requests per second with this credential (RATE_LIMIT_PER_CREDENTIAL)`,
  );
  const resolver = limiterOf(
    settings.resolverPerAddress,
    1,
    `more than ${settings.resolverPerAddress} resolver requests per second from this address (RATE_LIMIT_RESOLVER_PER_ADDRESS)`,
  );
  const downloads = limiterOf(
    settings.downloadsPerAddress,
    60,
    `more than ${settings.downloadsPerAddress} downloads per minute from this address (RATE_LIMIT_DOWNLOADS_PER_ADDRESS)`,
  );
  const failures = settings.authFailuresPerAddress === 0 ? undefined : new RateLimiterMemory({ points: settings.authFailuresPerAddress, duration: 60 });
  const failuresWhat = `more than ${settings.authFailuresPerAddress} failed authentications per minute from this address (RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS)`;
  /** Digests of credentials that authenticated lately, oldest success first, with when they stop counting. */
  const working = new Map<string, number>();
  const pairKey = (authorization: string | undefined, apiKey: string | undefined) => credentialKey(`${authorization ?? ''}\n${apiKey ?? ''}`);
  const isWorking = (authorization: string | undefined, apiKey: string | undefined): boolean => {
    if ((authorization ?? '') === '' && (apiKey ?? '') === '') return false;
    const until = working.get(pairKey(authorization, apiKey));
    return until !== undefined && until > Date.now();
  };
  return {
    credential: (authorization, apiKey) => {
      const value = authorization ?? apiKey;
      return value === undefined || value === '' ? Promise.resolve() : consume(credential, credentialKey(value));
    },
    resolver: (address) => consume(resolver, address),
    download: (address) => consume(downloads, address),
    async authAllowed(address, authorization, apiKey) {
      if (failures === undefined) return;
      const res = await failures.get(address);
      if (res !== null && res.consumedPoints >= settings.authFailuresPerAddress && !isWorking(authorization, apiKey)) {
        throw new RateLimitedError(
          `too many requests: ${failuresWhat}; retry after ${Math.max(1, Math.ceil(res.msBeforeNext / 1000))} s`,
          res.msBeforeNext / 1000,
        );
      }
    },
    authFailed(address) {
      void failures?.penalty(address);
    },
    authSucceeded(authorization, apiKey) {
      if (failures === undefined || ((authorization ?? '') === '' && (apiKey ?? '') === '')) return;
      const key = pairKey(authorization, apiKey);
      working.delete(key);
      working.set(key, Date.now() + workingCredentialTtlMs);
      if (working.size > maxWorkingCredentials) working.delete(working.keys().next().value!);
    },
  };
}

/** Settings that limit nothing (in-process tests and the metrics port). */
export const noRateLimits: RateLimitSettings = { perCredential: 0, resolverPerAddress: 0, downloadsPerAddress: 0, authFailuresPerAddress: 0 };
