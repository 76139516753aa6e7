import { JobBusError } from './errors.ts';
import { resolveSubscribeOptions, runDelivery } from './delivery.ts';
import type { ResolvedSubscribeOptions } from './delivery.ts';
import { JOB_KINDS } from './job-bus.ts';
import type { JobBus, JobHandler, JobKind, JobRef, JobSubscription } from './job-bus.ts';
import { jobDedupeKey, validateJobRef } from './job-ref.ts';
import type { ProgressHandler } from './progress.ts';

/** Options for {@link createMemoryBus}. */
export interface MemoryBusOptions {
  /** Deliveries per message before a nak drops it; default 10, like the JetStream bus. */
  maxDeliver?: number;
}

interface Entry {
  readonly job: JobRef;
  readonly key: string;
  deliveryCount: number;
}

interface MemorySubscription {
  readonly handler: JobHandler;
  readonly options: ResolvedSubscribeOptions;
  readonly inFlight: Set<Promise<void>>;
}

/**
 * An in-process JobBus for the zero-setup dev mode: same interface and settle rules
 * as the JetStream bus, nothing survives the process. Differences: there is no ack
 * deadline (a handler that hangs holds its message until it returns, `working()` is a
 * no-op), a job id is deduplicated only while its message is queued, waiting for a
 * redelivery or in flight (not for a time window), and a message nakked on its last
 * delivery is dropped rather than kept. Job progress reaches every progress subscriber of the
 * same bus (the dev mode's API and executor share one).
 */
export function createMemoryBus(options?: MemoryBusOptions): JobBus {
  const maxDeliver = options?.maxDeliver ?? 10;
  if (!Number.isInteger(maxDeliver) || maxDeliver < 1) {
    throw new RangeError(`maxDeliver must be a positive integer, got ${maxDeliver}`);
  }
  const ready = new Map<JobKind, Entry[]>(JOB_KINDS.map((kind) => [kind, []]));
  const subscribers = new Map<JobKind, MemorySubscription[]>(JOB_KINDS.map((kind) => [kind, []]));
  const liveKeys = new Set<string>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const pumpScheduled = new Set<JobKind>();
  const subscriptions = new Set<JobSubscription>();
  const progressHandlers = new Set<ProgressHandler>();
  let closed = false;

  function queueOf(kind: JobKind): Entry[] {
    const queue = ready.get(kind);
    if (!queue) throw new RangeError(`unknown job kind ${String(kind)}`);
    return queue;
  }

  function subscribersOf(kind: JobKind): MemorySubscription[] {
    const subs = subscribers.get(kind);
    if (!subs) throw new RangeError(`unknown job kind ${String(kind)}`);
    return subs;
  }

  // Handlers always start on a later microtask, never inside publish() or a settle call.
  function schedulePump(kind: JobKind): void {
    if (pumpScheduled.has(kind)) return;
    pumpScheduled.add(kind);
    queueMicrotask(() => {
      pumpScheduled.delete(kind);
      pump(kind);
    });
  }

  function pump(kind: JobKind): void {
    const queue = queueOf(kind);
    while (!closed && queue.length > 0) {
      // the least busy subscription with a free slot takes the next message
      let target: MemorySubscription | undefined;
      for (const sub of subscribersOf(kind)) {
        if (sub.inFlight.size < sub.options.concurrency && (!target || sub.inFlight.size < target.inFlight.size)) {
          target = sub;
        }
      }
      const entry = target ? queue.shift() : undefined;
      if (!target || !entry) return;
      deliver(kind, target, entry);
    }
  }

  function deliver(kind: JobKind, sub: MemorySubscription, entry: Entry): void {
    entry.deliveryCount += 1;
    const release = (): void => {
      liveKeys.delete(entry.key);
    };
    const run = runDelivery(
      entry.job,
      entry.deliveryCount,
      entry.deliveryCount >= maxDeliver,
      {
        working() {},
        ack() {
          release();
          return Promise.resolve();
        },
        nak(delayMs) {
          if (closed || entry.deliveryCount >= maxDeliver) {
            release();
            return;
          }
          const timer = setTimeout(() => {
            timers.delete(timer);
            queueOf(kind).push(entry);
            schedulePump(kind);
          }, delayMs);
          timers.add(timer);
        },
        term: release,
      },
      sub.handler,
      sub.options,
    ).finally(() => {
      sub.inFlight.delete(run);
      schedulePump(kind);
    });
    sub.inFlight.add(run);
  }

  return {
    announce(job) {
      this.publish(job).catch(() => undefined);
    },
    publish(job) {
      if (closed) return Promise.reject(new JobBusError('memory bus is closed'));
      try {
        const clean = validateJobRef(job);
        const key = jobDedupeKey(clean);
        if (!liveKeys.has(key)) {
          liveKeys.add(key);
          queueOf(clean.kind).push({ job: clean, key, deliveryCount: 0 });
          schedulePump(clean.kind);
        }
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error);
      }
    },

    subscribe(kind, handler, subscribeOptions) {
      if (closed) throw new JobBusError('memory bus is closed');
      const subs = subscribersOf(kind);
      const sub: MemorySubscription = {
        handler,
        options: resolveSubscribeOptions(subscribeOptions),
        inFlight: new Set(),
      };
      subs.push(sub);
      schedulePump(kind);
      let stopping: Promise<void> | undefined;
      const subscription: JobSubscription = {
        stop() {
          stopping ??= (async () => {
            const index = subs.indexOf(sub);
            if (index !== -1) subs.splice(index, 1);
            await Promise.all(sub.inFlight);
            subscriptions.delete(subscription);
          })();
          return stopping;
        },
      };
      subscriptions.add(subscription);
      return subscription;
    },

    publishProgress(update) {
      if (closed) return;
      // Delivered on a later microtask, like a message from another process.
      for (const handler of progressHandlers) queueMicrotask(() => handler(update));
    },

    subscribeProgress(handler) {
      const own: ProgressHandler = (update) => handler(update);
      progressHandlers.add(own);
      return () => void progressHandlers.delete(own);
    },

    pending(kind) {
      try {
        return Promise.resolve(queueOf(kind).filter((entry) => entry.deliveryCount === 0).length);
      } catch (error) {
        return Promise.reject(error);
      }
    },

    ping() {
      return closed ? Promise.reject(new JobBusError('memory bus is closed')) : Promise.resolve();
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all([...subscriptions].map((subscription) => subscription.stop()));
      progressHandlers.clear();
    },
  };
}
