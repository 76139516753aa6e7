import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './retry.ts';
import {
  decideWebhookAttempt,
  generateWebhookSecret,
  signWebhook,
  webhookEventTypeViolations,
  webhookFailureWindowMs,
  webhookMessageId,
  webhookRetry,
  webhookBreaker,
  webhookPauseMs,
  webhookUrlViolations,
  webhookWants,
} from './webhooks.ts';

const fixedRandom = (byte: number) => (buffer: Uint8Array) => void buffer.fill(byte);

describe('webhook signatures', () => {
  it('verify with the standardwebhooks package, one signature per live secret', () => {
    const current = generateWebhookSecret(fixedRandom(7));
    const previous = generateWebhookSecret(fixedRandom(9));
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = webhookMessageId('0b7f6a57-3f55-4b7e-a3a5-2d9b1e0c9f11');
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'mint_job_completed', timestamp: new Date().toISOString(), data: { a: 1 } });
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook([current, previous], id, timestamp, body) };
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
    expect(id).toBe('msg_0b7f6a573f554b7ea3a52d9b1e0c9f11');
  });
});

describe('webhook rules', () => {
  it('accepts https URLs, and http only for loopback hosts when allowed', () => {
    expect(webhookUrlViolations('https://erp.example.com/hooks?x=1', false)).toEqual([]);
    expect(webhookUrlViolations('http://erp.example.com/hooks', true)).toHaveLength(1);
    expect(webhookUrlViolations('http://127.0.0.1:8080/hooks', false)).toHaveLength(1);
    expect(webhookUrlViolations('http://127.0.0.1:8080/hooks', true)).toEqual([]);
    expect(webhookUrlViolations('http://localhost/hooks', true)).toEqual([]);
    expect(webhookUrlViolations('https://u:p@erp.example.com/', false)[0]?.message).toMatch(/credentials/);
    expect(webhookUrlViolations('not a url', false)[0]?.field).toBe('url');
  });

  it('filters by event type, an empty filter wanting every event', () => {
    expect(webhookWants([], 'mint_job_completed')).toBe(true);
    expect(webhookWants(['mint_job_failed'], 'mint_job_completed')).toBe(false);
    expect(webhookEventTypeViolations(['a', 'a'])).toHaveLength(1);
    expect(webhookEventTypeViolations(['Mint'])).toHaveLength(1);
  });

  it('decides: 2xx succeeds, 410 disables, others retry on the schedule until about three days have passed', () => {
    const now = new Date('2026-11-24T00:00:00Z');
    expect(decideWebhookAttempt({ status: 204, attempts: 3, failingSince: now }, now, 0.5)).toEqual({ kind: 'succeeded' });
    expect(decideWebhookAttempt({ status: 410, attempts: 1, failingSince: now }, now, 0.5)).toEqual({ kind: 'failed', disableEndpoint: 'gone' });
    expect(decideWebhookAttempt({ status: 302, attempts: 1, failingSince: now }, now, 1)).toEqual({ kind: 'retry', delayMs: 10_000 });
    expect(decideWebhookAttempt({ status: null, attempts: 2, failingSince: now }, now, 0)).toEqual({ kind: 'retry', delayMs: 15_000 });
    const threeDaysAgo = new Date(now.getTime() - webhookFailureWindowMs);
    expect(decideWebhookAttempt({ status: 500, attempts: 5, failingSince: threeDaysAgo }, now, 0.5)).toEqual({ kind: 'failed', disableEndpoint: 'failing' });
    expect(decideWebhookAttempt({ status: 500, attempts: webhookRetry.maxAttempts, failingSince: now }, now, 0.5)).toEqual({
      kind: 'failed',
      disableEndpoint: null,
    });
    // The whole schedule: even the fastest (no jitter added) outlasts the three-day failure window,
    // so a delivery to an endpoint that never answers disables it before its attempts run out.
    const total = (random: number) =>
      Array.from({ length: webhookRetry.maxAttempts - 1 }, (_, i) => retryDelayMs(webhookRetry, i + 1, random)).reduce((a, b) => a + b, 0);
    expect(total(0)).toBeGreaterThan(webhookFailureWindowMs);
    expect(total(1) / 86_400_000).toBeLessThan(4.2);
  });
});

describe('webhook circuit breaker', () => {
  it('stays closed below the threshold, then pauses for doubling times up to the cap', () => {
    expect(webhookPauseMs(webhookBreaker.threshold - 1)).toBeNull();
    expect(webhookPauseMs(webhookBreaker.threshold)).toBe(60_000);
    expect(webhookPauseMs(webhookBreaker.threshold + 1)).toBe(120_000);
    expect(webhookPauseMs(webhookBreaker.threshold + 100)).toBe(3600_000);
    expect(webhookPauseMs(3, { threshold: 2, basePauseMs: 100, maxPauseMs: 1000 })).toBe(200);
  });
});
