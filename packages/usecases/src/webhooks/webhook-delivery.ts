import {
  appendEvents,
  claimWebhookDeliveries,
  fanOutWebhookBrand,
  webhookFanoutBrands,
  type WebhookClaimBatch,
  findWebhookEndpoint,
  markWebhookEndpointFailing,
  readWebhookBacklog,
  recordWebhookAttempt,
  updateWebhookEndpoint,
  type WebhookClaim,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  decideWebhookAttempt,
  openSecret,
  signWebhook,
  webhookBreaker,
  webhookMessageId,
  webhookPauseMs,
  webhookRetry,
  type RetryPolicy,
  type WebhookBreakerPolicy,
} from '@mint/domain';
import type { UseCaseContext } from '../context.ts';
import type { WebhookSend } from './webhook-sender.ts';
import { webhookSecretContext } from './webhooks.ts';

/** Default lease on a claimed delivery: longer than an attempt's 10 s limit, so a live worker never loses it. */
export const defaultWebhookLeaseMs = 30_000;

/** Options of {@link fanOutWebhookEvents}: its bounds per pass. */
export interface WebhookFanoutOptions {
  /** Brands served in one pass, one transaction each; {@link defaultWebhookFanout}'s by default. */
  readonly brands?: number;
  /** Deliveries one brand's transaction writes at most (at least one event's, whatever its endpoints). */
  readonly deliveriesPerBrand?: number;
  /** Events of one brand fanned out in one pass at most. */
  readonly eventsPerBrand?: number;
  /** The previous pass's `lastBrand`, so this one starts after it (round robin); null or absent starts at the first brand. */
  readonly afterBrand?: string | null;
}

/** Default bounds of one fan-out pass: 16 brands, each at most 1,000 deliveries and 64 events. */
export const defaultWebhookFanout = { brands: 16, deliveriesPerBrand: 1_000, eventsPerBrand: 64 } as const;

/** What one fan-out pass did, and where the next pass's round robin starts. */
export interface WebhookFanoutPass {
  /** Events whose deliveries it wrote (their markers deleted). */
  readonly events: number;
  /** Deliveries it wrote. */
  readonly deliveries: number;
  /** The last brand it served; the next pass starts after it. Null when nothing waited. */
  readonly lastBrand: string | null;
}

/**
 * One pass of the webhook fan-out, outside every writer's transaction: writes the deliveries of
 * events written with a fan-out marker (see appendEvents) and deletes their markers. Fair and
 * bounded: up to `brands` brands with waiting events, round robin after `afterBrand`, one
 * transaction each, taking the brand's oldest events (SKIP LOCKED: concurrent passes of several
 * executors split them) as many as `deliveriesPerBrand` deliveries allow for its endpoints
 * (at least one, at most `eventsPerBrand`). An event's deliveries go to the endpoints that were
 * enabled when the statement that wrote it ran (the database's clock, whatever the services'
 * clocks) and whose filter wants it when the pass runs; the delivery key
 * (event, endpoint) makes a repeated pass write nothing twice.
 */
export async function fanOutWebhookEvents(ctx: UseCaseContext, options: WebhookFanoutOptions = {}): Promise<WebhookFanoutPass> {
  const brands = await webhookFanoutBrands(unitOfWork(ctx.db), options.afterBrand ?? null, options.brands ?? defaultWebhookFanout.brands);
  const deliveriesPerBrand = options.deliveriesPerBrand ?? defaultWebhookFanout.deliveriesPerBrand;
  const eventsPerBrand = options.eventsPerBrand ?? defaultWebhookFanout.eventsPerBrand;
  let events = 0;
  let deliveries = 0;
  for (const brandId of brands) {
    const done = await fanOutWebhookBrand(unitOfWork(ctx.db), brandId, { deliveries: deliveriesPerBrand, events: eventsPerBrand });
    events += done.events;
    deliveries += done.deliveries;
  }
  return { events, deliveries, lastBrand: brands.at(-1) ?? options.afterBrand ?? null };
}

/**
 * Runs fan-out passes until no event waits (for tests, tools and a worker's catch-up): the total
 * events and deliveries written.
 */
export async function drainWebhookFanout(ctx: UseCaseContext, options: WebhookFanoutOptions = {}): Promise<{ events: number; deliveries: number }> {
  let afterBrand = options.afterBrand ?? null;
  let events = 0;
  let deliveries = 0;
  for (;;) {
    const pass = await fanOutWebhookEvents(ctx, { ...options, afterBrand });
    if (pass.events === 0) return { events, deliveries };
    events += pass.events;
    deliveries += pass.deliveries;
    afterBrand = pass.lastBrand;
  }
}

/** Options of {@link claimWebhooks}. */
export interface WebhookClaimOptions {
  /** Lease on each claimed delivery; a worker that dies leaves it to be claimed again after it. */
  readonly leaseMs?: number;
  /** Deliveries of one endpoint in flight at once, across workers. */
  readonly perEndpoint: number;
  /** Deliveries of one brand in flight at once, across workers; {@link defaultWebhookPerBrand} by default. */
  readonly perBrand?: number;
  /** The previous claim's `lastBrand`, so this one starts after it (round robin); null or absent starts at the first brand. */
  readonly afterBrand?: string | null;
  /** The circuit breaker (its threshold makes a failing endpoint's circuit half open); the domain's `webhookBreaker` by default. */
  readonly breaker?: WebhookBreakerPolicy;
}

/** Default cap on one brand's deliveries in flight across workers (`WEBHOOK_PER_BRAND_CONCURRENCY`). */
export const defaultWebhookPerBrand = 8;

/**
 * Claims up to `limit` due deliveries in one transaction: compare-and-set per delivery, round robin
 * between brands, at most `perBrand` of one brand and `perEndpoint` of one endpoint in flight, none
 * of a paused endpoint (see claimWebhookDeliveries for the bound). Returns the claims and the
 * brand the next claim's round robin starts after.
 */
export async function claimWebhooks(ctx: UseCaseContext, limit: number, options: WebhookClaimOptions): Promise<WebhookClaimBatch> {
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    return claimWebhookDeliveries(em, now, new Date(now.getTime() + (options.leaseMs ?? defaultWebhookLeaseMs)), limit, {
      perEndpoint: options.perEndpoint,
      perBrand: options.perBrand ?? defaultWebhookPerBrand,
      afterBrand: options.afterBrand ?? null,
      breakerThreshold: (options.breaker ?? webhookBreaker).threshold,
    });
  });
}

/** Options of {@link deliverWebhook}. */
export interface WebhookDeliverOptions {
  readonly send: WebhookSend;
  /** The retry schedule; the domain's `webhookRetry` by default (tests shorten it). */
  readonly policy?: RetryPolicy;
  /** Randomness of the jitter, [0, 1). */
  readonly random?: () => number;
  /** The circuit breaker; the domain's `webhookBreaker` by default (tests shorten it). */
  readonly breaker?: WebhookBreakerPolicy;
}

/** What an attempt came to: its decision, or `lost` when the lease lapsed and another worker owns the delivery. */
export interface WebhookDeliveryResult {
  readonly result: 'succeeded' | 'retry' | 'failed' | 'lost';
  readonly status: number | null;
  readonly durationMs: number;
}

/**
 * Sends a claimed delivery (body as stored; `webhook-id`, `webhook-timestamp` and one
 * `webhook-signature` per live secret), then records the outcome in one transaction: success
 * clears the endpoint's failure streak and closes its circuit; a failure starts or lengthens the
 * streak, schedules the retry and, from the breaker's threshold on, pauses the endpoint (its
 * `paused_until`); 410 Gone or three days of failures disable the endpoint with a
 * webhook_endpoint_disabled event.
 */
export async function deliverWebhook(ctx: UseCaseContext, claim: WebhookClaim, options: WebhookDeliverOptions): Promise<WebhookDeliveryResult> {
  const sentAt = ctx.clock();
  const body = JSON.stringify(claim.body);
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const messageId = webhookMessageId(claim.id);
  const context = webhookSecretContext(claim.brandId, claim.endpointId);
  const secrets = [openSecret(ctx.webhookSecretKeys, claim.secret, context)];
  if (claim.previousSecret !== null && claim.previousSecretExpiresAt !== null && claim.previousSecretExpiresAt > sentAt) {
    secrets.push(openSecret(ctx.webhookSecretKeys, claim.previousSecret, context));
  }
  const response = await options.send({
    url: claim.url,
    body,
    headers: { 'webhook-id': messageId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secrets, messageId, timestamp, body) },
  });
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    const decision = decideWebhookAttempt(
      { status: response.status, attempts: claim.attempts, failingSince: claim.failingSince ?? now },
      now,
      (options.random ?? Math.random)(),
      options.policy ?? webhookRetry,
    );
    const recorded = await recordWebhookAttempt(
      em,
      claim,
      {
        status: decision.kind === 'retry' ? 'pending' : decision.kind,
        nextAttemptAt: decision.kind === 'retry' ? new Date(now.getTime() + decision.delayMs) : null,
        statusCode: response.status,
        durationMs: response.durationMs,
        error: response.error,
      },
      now,
    );
    if (!recorded) return { result: 'lost', status: response.status, durationMs: response.durationMs } as const;
    if (decision.kind === 'succeeded') {
      if (claim.failingSince !== null || claim.consecutiveFailures > 0) {
        await updateWebhookEndpoint(em, claim.brandId, claim.endpointId, { failingSince: null, consecutiveFailures: 0, pausedUntil: null }, now);
      }
    } else {
      const failures = await markWebhookEndpointFailing(em, claim.brandId, claim.endpointId, now);
      const pauseMs = webhookPauseMs(failures, options.breaker ?? webhookBreaker);
      if (pauseMs !== null) await updateWebhookEndpoint(em, claim.brandId, claim.endpointId, { pausedUntil: new Date(now.getTime() + pauseMs) }, now);
    }
    if (decision.kind === 'failed' && decision.disableEndpoint !== null) {
      const endpoint = await findWebhookEndpoint(em, claim.brandId, claim.endpointId, true);
      if (endpoint?.enabled) {
        await updateWebhookEndpoint(em, claim.brandId, claim.endpointId, { enabled: false, disabledReason: decision.disableEndpoint }, now);
        await appendEvents(em, now, [
          {
            brandId: claim.brandId,
            eventType: 'webhook_endpoint_disabled',
            entityType: 'webhook_endpoint',
            entityId: claim.endpointId,
            actor: null,
            payload: { reason: decision.disableEndpoint, status_code: response.status, url: endpoint.url },
          },
        ]);
      }
    }
    return { result: decision.kind, status: response.status, durationMs: response.durationMs } as const;
  });
}

/** Deliveries waiting across brands and the age of the oldest, for the backlog gauges. */
export async function webhookBacklog(ctx: UseCaseContext): Promise<{ pending: number; oldestAgeSeconds: number }> {
  const { pending, oldest } = await readWebhookBacklog(unitOfWork(ctx.db));
  return { pending, oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (ctx.clock().getTime() - oldest.getTime()) / 1000) };
}
