import {
  appendEvents, claimWebhookDeliveries, findWebhookEndpoint, markWebhookEndpointFailing, readWebhookBacklog, recordWebhookAttempt, updateWebhookEndpoint,
  type WebhookClaim,
} from '@mint/db';
import { decideWebhookAttempt, openSecret, signWebhook, webhookMessageId, webhookRetry, type RetryPolicy } from '@mint/domain';
import type { UseCaseContext } from './context.ts';
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
}

/** Claims up to `limit` due deliveries (compare-and-set per delivery, per-endpoint limit), one transaction. */
export async function claimWebhooks(ctx: UseCaseContext, limit: number, options: WebhookClaimOptions): Promise<WebhookClaim[]> {
  return ctx.db.em.fork().transactional(async (em) => {
    const now = ctx.clock();
    return claimWebhookDeliveries(em, now, new Date(now.getTime() + (options.leaseMs ?? defaultWebhookLeaseMs)), limit, options.perEndpoint);
  });
}

/** Options of {@link deliverWebhook}. */
export interface WebhookDeliverOptions {
  readonly send: WebhookSend;
  /** The retry schedule; the domain's `webhookRetry` by default (tests shorten it). */
  readonly policy?: RetryPolicy;
  /** Randomness of the jitter, [0, 1). */
  readonly random?: () => number;
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
 * clears the endpoint's failure streak; a failure starts it and schedules the retry; 410 Gone or
 * three days of failures disable the endpoint with a webhook_endpoint_disabled event.
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
  return ctx.db.em.fork().transactional(async (em) => {
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
      if (claim.failingSince !== null) await updateWebhookEndpoint(em, claim.brandId, claim.endpointId, { failingSince: null }, now);
    } else {
      await markWebhookEndpointFailing(em, claim.brandId, claim.endpointId, now);
    }
    if (decision.kind === 'failed' && decision.disableEndpoint !== null) {
      const endpoint = await findWebhookEndpoint(em, claim.brandId, claim.endpointId, true);
      if (endpoint !== null && endpoint.enabled) {
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
  const { pending, oldest } = await readWebhookBacklog(ctx.db.em.fork());
  return { pending, oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (ctx.clock().getTime() - oldest.getTime()) / 1000) };
}
