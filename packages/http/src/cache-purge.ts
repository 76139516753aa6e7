// Purges of the caching proxy in front of the resolver (CACHE_PURGE_URL): `PURGE` with a
// `Surrogate-Key` header, the Fastly and Varnish convention; the proxy drops every cached answer
// carrying that key. Transport only: which key a change purges is the domain's (purgeKeyOf).

/** Sends purges; see {@link createCachePurger}. */
export interface CachePurger {
  /** Purges `key` at every purge URL; never throws, never waits (failures are retried, then logged). */
  purge(key: string): void;
  /** Waits for the purges in flight (at most `timeoutMs`). */
  close(timeoutMs?: number): Promise<void>;
}

/** Delays before the second, third and fourth try of a purge that failed. */
const retryDelaysMs = [200, 1_000, 5_000];

/**
 * Purges at each of `urls`. A purge that fails (no answer within 2 s, or a status other than 2xx)
 * is tried again after 0.2, 1 and 5 s, then logged as lost: the cached answers then live until
 * their s-maxage ends. Every change sends its own purge (one already in flight for the same key
 * may have reached the proxy before the change's commit, and an answer cached since would be stale).
 */
export function createCachePurger(urls: readonly string[], logger: { warn(line: object, msg: string): void }): CachePurger {
  const inFlight = new Set<Promise<void>>();
  const send = async (url: string, key: string) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(url, { method: 'PURGE', headers: { 'surrogate-key': key }, signal: AbortSignal.timeout(2_000) });
        await response.arrayBuffer();
        if (response.ok) return;
        throw new Error(`purge answered ${response.status}`);
      } catch (err) {
        const delay = retryDelaysMs[attempt];
        if (delay === undefined) {
          logger.warn({ err, key, url }, 'cache purge lost; cached answers live until their s-maxage');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  };
  return {
    purge(key) {
      for (const url of urls) {
        const done = send(url, key).finally(() => inFlight.delete(done));
        inFlight.add(done);
      }
    },
    async close(timeoutMs = 2_000) {
      await Promise.race([Promise.all(inFlight), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    },
  };
}
