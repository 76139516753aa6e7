// The webhook delivery worker: first writes the deliveries of events written since (the fan-out,
// fair and bounded per pass, out of every writer's transaction), then claims due deliveries (compare-and-set, under a lease, round robin
// between brands, at most `perBrand` in flight per brand and `perEndpoint` per endpoint across
// executors, none of an endpoint its circuit breaker paused) and sends up to `concurrency` at once,
// so a slow receiver holds only its own endpoint's slots and a brand only its own. Transport only:
// the rules are the use case's.

import type { Metrics } from '@mint/runtime';
import { claimWebhooks, deliverWebhook, fanOutWebhookEvents, type UseCaseContext, type WebhookFanoutOptions, type WebhookSend } from '@mint/usecases';
import type { RetryPolicy, WebhookBreakerPolicy } from '@mint/domain';
import type { Logger } from 'pino';

/** Options of {@link startWebhookWorker}. */
export interface WebhookWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly logger: Logger;
  /** Sends one delivery (`createWebhookSender` with the network policy). */
  readonly send: WebhookSend;
  /** Deliveries this process sends at once. */
  readonly concurrency: number;
  /** Deliveries of one endpoint in flight at once, across executors. */
  readonly perEndpoint: number;
  /** Deliveries of one brand in flight at once, across executors (`WEBHOOK_PER_BRAND_CONCURRENCY`; 8 by default). */
  readonly perBrand?: number;
  /** The circuit breaker; the domain's `webhookBreaker` by default (tests shorten it). */
  readonly breaker?: WebhookBreakerPolicy;
  /** How long to wait before looking again when nothing is due; default 500 ms. */
  readonly pollIntervalMs?: number;
  /** Lease on a claimed delivery (default 30 s). */
  readonly leaseMs?: number;
  /** Retry schedule; the domain's `webhookRetry` by default (tests shorten it). */
  readonly policy?: RetryPolicy;
  /** Randomness of the retry jitter, [0, 1); Math.random by default (tests pin it). */
  readonly random?: () => number;
  readonly metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookDuration'>;
  /** Bounds of one fan-out pass (brands, deliveries and events per brand); the use case's defaults by default. */
  readonly fanout?: Omit<WebhookFanoutOptions, 'afterBrand'>;
}

/** A running webhook worker. */
export interface WebhookWorker {
  /** Stops claiming, waits for the deliveries in flight to be recorded, and resolves when the loop ended. */
  stop(): Promise<void>;
}

/** Starts the loop; errors are logged and the loop goes on. Claimed deliveries of a process that dies are claimed again after their lease. */
export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { ctx, logger } = options;
  const pollMs = options.pollIntervalMs ?? 500;
  let stopping = false;
  const inFlight = new Set<Promise<void>>();
  let wake: (() => void) | null = null;
  // A delivery that ended while the loop was not asleep (fanning out, claiming) wakes its next sleep:
  // its freed slot is looked at without waiting a poll interval.
  let woken = false;
  /** Waits `ms` or until woken; true when the time ran out. */
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (woken) {
        woken = false;
        resolve(false);
        return;
      }
      const timer = setTimeout(() => resolve(true), ms);
      wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
    }).finally(() => {
      wake = null;
    });
  // A claim is one transaction and commit: claiming each freed slot alone capped a process at
  // about 1 / commit time (190 deliveries/s in bench/webhooks.ts). While deliveries are in flight
  // the worker waits for half its slots to free (or the poll interval to pass) and claims them at once.
  const batch = Math.max(1, Math.floor(options.concurrency / 2));
  let waited = false;
  // Round robin between brands: each claim starts after the brand the previous one looked at last.
  let afterBrand: string | null = null;
  // The fan-out runs before each claim (one index probe when nothing waits), so an event's
  // deliveries are claimable at the worker's next look as when the writer wrote them; while every
  // slot is taken it still runs, once a poll interval or at once while its last pass found events
  // waiting. Its own round robin between brands.
  let fanoutAfter: string | null = null;
  let fanoutAt = Number.NEGATIVE_INFINITY;
  let fanoutBusy = false;
  const fanOut = async (always: boolean) => {
    if (!always && !fanoutBusy && performance.now() - fanoutAt < pollMs) return;
    fanoutAt = performance.now();
    try {
      const pass = await fanOutWebhookEvents(ctx, { ...options.fanout, afterBrand: fanoutAfter });
      fanoutAfter = pass.lastBrand;
      fanoutBusy = pass.events > 0;
      if (fanoutBusy) logger.debug({ events: pass.events, deliveries: pass.deliveries }, 'webhook deliveries written');
    } catch (err) {
      fanoutBusy = false;
      logger.error({ err }, 'webhook fan-out error; will retry');
    }
  };

  const loop = (async () => {
    while (!stopping) {
      const free = options.concurrency - inFlight.size;
      if (free <= 0 || (inFlight.size > 0 && free < batch && !waited)) {
        await fanOut(false);
        waited = fanoutBusy ? false : await sleep(pollMs);
        continue;
      }
      waited = false;
      await fanOut(true);
      try {
        const { claims, lastBrand } = await claimWebhooks(ctx, free, {
          perEndpoint: options.perEndpoint,
          afterBrand,
          ...(options.perBrand === undefined ? {} : { perBrand: options.perBrand }),
          ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
          ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
        });
        afterBrand = lastBrand;
        for (const claim of claims) {
          const task = deliverWebhook(ctx, claim, {
            send: options.send,
            ...(options.policy === undefined ? {} : { policy: options.policy }),
            ...(options.random === undefined ? {} : { random: options.random }),
            ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
          })
            .then(
              (outcome) => {
                options.metrics?.webhookDeliveries.inc({ result: outcome.result });
                options.metrics?.webhookDuration.observe(outcome.durationMs / 1000);
                const line = { deliveryId: claim.id, endpointId: claim.endpointId, brandId: claim.brandId, attempt: claim.attempts, ...outcome };
                if (outcome.result === 'succeeded') logger.debug(line, 'webhook delivered');
                else logger.info(line, 'webhook not delivered');
              },
              (err: unknown) => logger.error({ err, deliveryId: claim.id, endpointId: claim.endpointId }, 'webhook delivery error; retried after its lease'),
            )
            .finally(() => {
              inFlight.delete(task);
              if (wake === null) woken = true;
              else (wake as () => void)();
            });
          inFlight.add(task);
        }
        if (claims.length === 0 && !fanoutBusy) waited = await sleep(pollMs);
      } catch (err) {
        logger.error({ err }, 'webhook worker error; will retry');
        waited = await sleep(pollMs);
      }
    }
    await Promise.all(inFlight);
  })();
  logger.info({ concurrency: options.concurrency, perEndpoint: options.perEndpoint, perBrand: options.perBrand, pollMs }, 'webhook worker started');
  return {
    async stop() {
      stopping = true;
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
