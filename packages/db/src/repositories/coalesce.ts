// Lookups coalesced into few queries: the mechanism the resolver's unit and link reads share.

/** How {@link coalesced} runs one lookup alone and several at once. */
export interface CoalescedLookup<K, V> {
  /** Largest number of keys in one query. */
  readonly maxBatch: number;
  /** Queries running at once; further lookups wait and go together when a slot frees. */
  readonly maxInFlight: number;
  /** One key alone (a prepared single-row statement). */
  one(key: K): Promise<V>;
  /** Several keys in one query; answers in the keys' order. */
  many(keys: readonly K[]): Promise<V[]>;
}

/**
 * A lookup whose calls are coalesced: at most `maxInFlight` queries run at once; calls arriving in
 * the same event-loop turn, or while every slot is busy, go to the database together as one query
 * of at most `maxBatch` keys (a lone one through `one`). Under load this saves a round trip, its
 * socket writes and a backend wake-up per call; when idle a call waits for nothing but the end of
 * its turn. A failed query rejects every call it carried.
 */
export function coalesced<K, V>(lookup: CoalescedLookup<K, V>): (key: K) => Promise<V> {
  const { maxBatch, maxInFlight } = lookup;
  interface Waiting {
    key: K;
    resolve(value: V): void;
    reject(e: unknown): void;
  }
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    while (waiting.length > 0 && inFlight < maxInFlight) {
      const batch = waiting.length <= maxBatch ? waiting : waiting.slice(0, maxBatch);
      waiting = waiting.length <= maxBatch ? [] : waiting.slice(maxBatch);
      inFlight++;
      void run(batch).then(settled);
    }
  };
  /** A slot is free: what queued up meanwhile goes now, as one query. */
  const settled = () => {
    inFlight--;
    if (waiting.length > 0) flush();
  };
  const run = async (batch: Waiting[]): Promise<void> => {
    try {
      if (batch.length === 1) {
        const w = batch[0]!;
        w.resolve(await lookup.one(w.key));
        return;
      }
      const answers = await lookup.many(batch.map((w) => w.key));
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(answers[i]!);
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  };
  return (key) =>
    new Promise((resolve, reject) => {
      waiting.push({ key, resolve, reject });
      if (!scheduled && inFlight < maxInFlight) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
