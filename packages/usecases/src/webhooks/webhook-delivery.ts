import {
  appendEvents, claimWebhookDeliveries, type WebhookClaimBatch, findWebhookEndpoint, markWebhookEndpointFailing, readWebhookBacklog, recordWebhookAttempt, updateWebhookEndpoint,
  type WebhookClaim, unitOfWork, transaction,
} from '@mint/db';
import {
  decideWebhookAttempt, openSecret, signWebhook, webhookBreaker, webhookMessageId, webhookPauseMs, webhookRetry, type RetryPolicy, type WebhookBreakerPolicy,
} from '@mint/domain';
import type { UseCaseContext } from '../context.ts';
import type { WebhookSend } from './webhook-sender.ts';
import { webhookSecretContext } from './webhooks.ts';

/** Default lease on a claimed delivery: longer than an attempt's 10 s limit, so a live worker never loses it. */
export const defaultWebhookLeaseMs = 30_000;

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
      perEndpoint: options.perEndpoint, perBrand: options.perBrand ?? defaultWebhookPerBrand, afterBrand: options.afterBrand ?? null,
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
    url: claim.url, body,
    headers: { 'webhook-id': messageId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secrets, messageId, timestamp, body) },
  });
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    const decision = decideWebhookAttempt(
      { status: response.status, attempts: claim.attempts, failingSince: claim.failingSince ?? now }, now, (options.random ?? Math.random)(), options.policy ?? webhookRetry,
    );
    const recorded = await recordWebhookAttempt(em, claim, {
      status: decision.kind === 'retry' ? 'pending' : decision.kind,
      nextAttemptAt: decision.kind === 'retry' ? new Date(now.getTime() + decision.delayMs) : null,
      statusCode: response.status, durationMs: response.durationMs, error: response.error,
    }, now);
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
        await appendEvents(em, now, [{
          brandId: claim.brandId, eventType: 'webhook_endpoint_disabled', entityType: 'webhook_endpoint', entityId: claim.endpointId, actor: null,
          payload: { reason: decision.disableEndpoint, status_code: response.status, url: endpoint.url },
        }]);
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
