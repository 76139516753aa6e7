/**
 * Webhooks: brands' endpoints receive the audit events matching their filter, signed as the
 * Standard Webhooks specification describes (standardwebhooks.com). Pure rules: URL and filter
 * validation, secrets, signatures, what an answer means, and the retry schedule. Randomness and
 * the clock are passed in.
 */
import { createHmac } from 'node:crypto';
import type { FieldViolation } from './errors.ts';
import { retryDelayMs, type RetryPolicy } from './retry.ts';

/** Prefix of a signing secret; the rest is the base64 of its 32 random bytes. */
export const webhookSecretPrefix = 'whsec_';
/** Longest endpoint URL. */
export const maxWebhookUrlLength = 2048;
/** Longest event type filter. */
export const maxWebhookEventTypes = 50;
/** How long a rotated-out secret still signs (both signatures are sent): 24 hours. */
export const webhookSecretOverlapMs = 24 * 3600_000;
/** How long a delivery attempt may take before it counts as failed. */
export const webhookTimeoutMs = 10_000;
/** Most response body bytes read (and kept) of an answer. */
export const webhookMaxResponseBytes = 4096;
/** An endpoint failing this long without one success is disabled: three days. */
export const webhookFailureWindowMs = 3 * 24 * 3600_000;

/**
 * Deliveries: retried 10 s after the first failure, doubling to at most 8 h, a quarter jittered,
 * given up after 24 attempts: 74.5 to 99.4 h from the first attempt to the last, so even the
 * fastest schedule outlasts the three-day failure window and a delivery to an endpoint that never
 * answers disables it ({@link webhookFailureWindowMs}) before it runs out of attempts.
 */
export const webhookRetry: RetryPolicy = { baseMs: 10_000, capMs: 8 * 3600_000, jitter: 0.25, maxAttempts: 24 };

/**
 * Circuit breaking of an endpoint that keeps failing: from `threshold` failed attempts in a row its
 * circuit opens and the endpoint is paused (its due deliveries wait and hold no worker slot) for
 * `basePauseMs`, doubling with each further failure up to `maxPauseMs`; when the pause ends one
 * delivery at a time probes it (half open) until a success closes the circuit.
 */
export interface WebhookBreakerPolicy {
  /** Failures in a row that open the circuit. */
  readonly threshold: number;
  /** The first pause. */
  readonly basePauseMs: number;
  /** The longest pause. */
  readonly maxPauseMs: number;
}

/** The breaker's default: open after 5 failures in a row, pause 1 minute doubling to 1 hour. */
export const webhookBreaker: WebhookBreakerPolicy = { threshold: 5, basePauseMs: 60_000, maxPauseMs: 3600_000 };

/** How long an endpoint with `consecutiveFailures` failures in a row is paused, or null while its circuit stays closed. */
export function webhookPauseMs(consecutiveFailures: number, policy: WebhookBreakerPolicy = webhookBreaker): number | null {
  if (consecutiveFailures < policy.threshold) return null;
  return Math.min(policy.maxPauseMs, policy.basePauseMs * 2 ** Math.min(30, consecutiveFailures - policy.threshold));
}

/** Statuses of a delivery. */
export type WebhookDeliveryStatus =
  /** Waiting for its next attempt (`next_attempt_at`); left by a claim. */
  | 'pending'
  /** Claimed by a worker under a lease; back to pending on a retryable failure or when the lease lapses. */
  | 'delivering'
  /** A 2xx answer arrived; final (a redelivery makes it pending again). */
  | 'succeeded'
  /** Given up: attempts exhausted, or the endpoint answered 410 Gone; final (a redelivery makes it pending again). */
  | 'failed';
/** All delivery statuses. */
export const webhookDeliveryStatuses: readonly WebhookDeliveryStatus[] = ['pending', 'delivering', 'succeeded', 'failed'];

/** True for a host name that is a loopback address or `localhost`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Problems of an endpoint URL: it must be an absolute https URL without credentials or fragment;
 * `http://` is accepted only for a loopback host and only with `allowLoopback` (dev mode, tests).
 */
export function webhookUrlViolations(url: string, allowLoopback: boolean, field = 'url'): FieldViolation[] {
  if (url.length > maxWebhookUrlLength) return [{ field, message: `must be at most ${maxWebhookUrlLength} characters` }];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [{ field, message: 'must be an absolute https:// URL' }];
  }
  if (parsed.username !== '' || parsed.password !== '') return [{ field, message: 'must not carry credentials' }];
  if (parsed.hash !== '') return [{ field, message: 'must not carry a fragment' }];
  if (parsed.protocol === 'https:') return [];
  if (parsed.protocol === 'http:' && allowLoopback && isLoopbackHost(parsed.hostname)) return [];
  return [{ field, message: allowLoopback ? 'must be an https:// URL (http:// only for a loopback host)' : 'must be an https:// URL' }];
}

/** Problems of an event type filter: each a lowercase event name, at most 50, no repeats. */
export function webhookEventTypeViolations(eventTypes: readonly string[], field = 'event_types'): FieldViolation[] {
  if (eventTypes.length > maxWebhookEventTypes) return [{ field, message: `must list at most ${maxWebhookEventTypes} event types` }];
  if (new Set(eventTypes).size !== eventTypes.length) return [{ field, message: 'must not repeat an event type' }];
  const bad = eventTypes.find((t) => !/^[a-z][a-z0-9_]{0,99}$/.test(t));
  return bad === undefined ? [] : [{ field, message: `"${bad.slice(0, 100)}" is not an event type` }];
}

/** True when an endpoint with filter `eventTypes` (empty: every event) wants events of `eventType`. */
export function webhookWants(eventTypes: readonly string[], eventType: string): boolean {
  return eventTypes.length === 0 || eventTypes.includes(eventType);
}

/** A new signing secret, `whsec_` and the base64 of 32 bytes drawn by `randomFill`. */
export function generateWebhookSecret(randomFill: (buffer: Uint8Array) => void): string {
  const bytes = new Uint8Array(32);
  randomFill(bytes);
  return webhookSecretPrefix + Buffer.from(bytes).toString('base64');
}

/** The `webhook-id` of a delivery: stable across its attempts and redeliveries. */
export function webhookMessageId(deliveryId: string): string {
  return `msg_${deliveryId.replaceAll('-', '')}`;
}

/**
 * The `webhook-signature` header value: `v1,<base64 HMAC-SHA256>` of `id.timestamp.body` under
 * each secret (the current first, then a rotated-out one still in its 24 h), space-separated.
 */
export function signWebhook(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(webhookSecretPrefix) ? secret.slice(webhookSecretPrefix.length) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}

/** What one attempt's outcome means. */
export type WebhookAttemptDecision =
  /** 2xx: delivered. */
  | { readonly kind: 'succeeded' }
  /** Try again after `delayMs`. */
  | { readonly kind: 'retry'; readonly delayMs: number }
  /** Give up on this delivery; with `disableEndpoint` the endpoint is disabled too (410 Gone, or three days of failures). */
  | { readonly kind: 'failed'; readonly disableEndpoint: 'gone' | 'failing' | null };

/** The outcome of an attempt: an HTTP status, or null when no answer came (refused address, timeout, network error). */
export interface WebhookAttemptOutcome {
  readonly status: number | null;
  /** Attempts made, this one included. */
  readonly attempts: number;
  /** Since when the endpoint has been failing without a success (this failure included), or null. */
  readonly failingSince: Date | null;
}

/**
 * Decides what follows an attempt: 2xx succeeds; 410 Gone fails the delivery and disables the
 * endpoint; anything else (3xx too: redirects are not followed) retries under `policy`, until its
 * attempts are exhausted or the endpoint has failed for three days, which disables it.
 */
export function decideWebhookAttempt(outcome: WebhookAttemptOutcome, now: Date, random: number, policy: RetryPolicy = webhookRetry): WebhookAttemptDecision {
  if (outcome.status !== null && outcome.status >= 200 && outcome.status < 300) return { kind: 'succeeded' };
  if (outcome.status === 410) return { kind: 'failed', disableEndpoint: 'gone' };
  const failingLong = outcome.failingSince !== null && now.getTime() - outcome.failingSince.getTime() >= webhookFailureWindowMs;
  if (failingLong) return { kind: 'failed', disableEndpoint: 'failing' };
  if (outcome.attempts >= policy.maxAttempts) return { kind: 'failed', disableEndpoint: null };
  return { kind: 'retry', delayMs: retryDelayMs(policy, outcome.attempts, random) };
}
