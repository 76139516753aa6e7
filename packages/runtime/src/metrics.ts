// Every Prometheus metric of the API and the executor, defined in one place. Each process creates
// one `Metrics` (its own registry), counts into it where things happen and serves it at /metrics.
// Gauges of shared state (jobs by status, outbox lag, consumer pending) are read on each scrape
// from the sources the process passes in; a failing source blanks its gauge instead of failing the scrape.

import { countJobsPerStatus, type Database } from '@mint/db';
import { jobStatuses, type JobStatus } from '@mint/domain';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Prefix of every metric name of this service. */
export const metricPrefix = 'minting_';

/** Where the scrape-time gauges read their values; a process passes the ones it can reach. */
export interface MetricSources {
  /** Mint jobs per status, over all brands (see {@link countJobsByStatus}). */
  readonly jobsByStatus?: () => Promise<Readonly<Partial<Record<JobStatus, number>>>>;
  /** Messages waiting in the transactional outbox and the oldest one's age (`outboxLag` of `@mint/usecases`). */
  readonly outboxLag?: () => Promise<{ readonly pending: number; readonly oldestAgeMs: number }>;
  /** Mint job messages the bus holds that no consumer has received yet (`bus.pending('mint')`). */
  readonly consumerPending?: () => Promise<number>;
  /** Webhook deliveries waiting (pending or being sent) and the oldest one's age (`webhookBacklog` of `@mint/usecases`). */
  readonly webhookBacklog?: () => Promise<{ readonly pending: number; readonly oldestAgeSeconds: number }>;
}

/** The metrics of one process; the fields are prom-client metrics to count into. */
export interface Metrics {
  /** The registry holding all of them (plus Node's process metrics); `render` formats it. */
  readonly registry: Registry;
  /** `minting_rpc_requests_total{method,code}`: finished Connect/gRPC/gRPC-Web calls; `method` is `package.Service/Method`, `code` a Connect code (`ok`, `not_found`, ...). */
  readonly rpcRequests: Counter<'method' | 'code'>;
  /** `minting_rpc_duration_seconds{method,code}`: call latency, from the first interceptor to the end of the response. */
  readonly rpcDuration: Histogram<'method' | 'code'>;
  /** `minting_http_requests_total{method,route,code}`: plain HTTP requests (health, /metrics, /v1, resolver); `code` is the status. */
  readonly httpRequests: Counter<'method' | 'route' | 'code'>;
  /** `minting_http_request_duration_seconds{method,route,code}`: plain HTTP request latency. */
  readonly httpDuration: Histogram<'method' | 'route' | 'code'>;
  /** `minting_units_minted_total`: units written by committed chunks of this process. */
  readonly unitsMinted: Counter;
  /** `minting_chunk_duration_seconds`: duration of one chunk transaction. */
  readonly chunkDuration: Histogram;
  /** `minting_lease_renewals_total`: job leases extended by a committed chunk. */
  readonly leaseRenewals: Counter;
  /** `minting_lease_losses_total`: chunks rejected because another executor had taken the job's lease over. */
  readonly leaseLosses: Counter;
  /** `minting_scan_events_total{result}`: resolver scan events `written`, `dropped` (the queue was full) or `failed` (their write failed). */
  readonly scanEvents: Counter<'result'>;
  /** `minting_jobs{status}`: mint jobs per status (all brands), read on scrape. */
  readonly jobs: Gauge<'status'>;
  /** `minting_outbox_pending_messages`: outbox rows not yet relayed to the bus, read on scrape. */
  readonly outboxPending: Gauge;
  /** `minting_outbox_oldest_age_seconds`: age of the oldest outbox row (0 when empty), read on scrape. */
  readonly outboxOldestAge: Gauge;
  /** `minting_consumer_pending_messages`: mint job messages not yet delivered to any executor, read on scrape. */
  readonly consumerPending: Gauge;
  /** `minting_webhook_deliveries_total{result}`: webhook attempts of this process by result: `succeeded`, `retry`, `failed` (given up) or `lost` (lease lapsed). */
  readonly webhookDeliveries: Counter<'result'>;
  /** `minting_webhook_delivery_duration_seconds`: time from sending a webhook to its answer (or time limit). */
  readonly webhookDuration: Histogram;
  /** `minting_webhook_pending_deliveries`: webhook deliveries waiting or being sent (all brands), read on scrape. */
  readonly webhookPending: Gauge;
  /** `minting_webhook_oldest_pending_age_seconds`: age of the oldest waiting webhook delivery (0 when none), read on scrape. */
  readonly webhookOldestAge: Gauge;
  /** `minting_metric_source_errors_total{source}`: scrapes in which a gauge's source failed (its gauge then reads NaN, or has no series when labelled); visible from the next scrape. */
  readonly sourceErrors: Counter<'source'>;
  /** The exposition text and its content type, for a `/metrics` response. */
  render(): Promise<{ readonly contentType: string; readonly body: string }>;
}

/** Latency buckets in seconds, 5 ms to 10 s, for calls and requests. */
const requestBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Chunk buckets in seconds: a 2,000-unit chunk takes tens of milliseconds; 20,000 units take longer. */
const chunkBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Creates a fresh registry with every metric of the service and Node's process metrics. Gauges
 * whose source is not given report nothing (labelled) or NaN. Sources are read concurrently on each
 * scrape; one that throws makes its gauge read NaN (a labelled one: no series), never a stale
 * value, and counts into `minting_metric_source_errors_total`.
 */
export function createMetrics(sources: MetricSources = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: metricPrefix });
  const registers = [registry];
  const sourceErrors = new Counter({
    name: `${metricPrefix}metric_source_errors_total`,
    help: 'Scrapes in which a gauge source failed.',
    labelNames: ['source'] as const,
    registers,
  });
  /** Runs `read` for a gauge's collect: resets the gauge first (a label-less one to NaN) so a failure leaves no stale value. */
  const collectWith =
    <T>(name: string, gauge: Gauge<string>, read: (() => Promise<T>) | undefined, apply: (value: T) => void, labelled = false) =>
    async () => {
      gauge.reset();
      if (!labelled) gauge.set(Number.NaN);
      if (read === undefined) return;
      try {
        apply(await read());
      } catch {
        sourceErrors.inc({ source: name });
      }
    };

  // The outbox source feeds two gauges; one read per scrape serves both.
  let outboxRead: Promise<{ pending: number; oldestAgeMs: number }> | undefined;
  const readOutbox =
    sources.outboxLag === undefined ? undefined : () => (outboxRead ??= sources.outboxLag!().finally(() => queueMicrotask(() => (outboxRead = undefined))));

  let webhookRead: Promise<{ pending: number; oldestAgeSeconds: number }> | undefined;
  const readWebhooks =
    sources.webhookBacklog === undefined
      ? undefined
      : () => (webhookRead ??= sources.webhookBacklog!().finally(() => queueMicrotask(() => (webhookRead = undefined))));
  const webhookPending: Gauge = new Gauge({
    name: `${metricPrefix}webhook_pending_deliveries`,
    help: 'Webhook deliveries waiting or being sent (all brands).',
    registers,
    collect: () => collectWith('webhook_backlog', webhookPending, readWebhooks, (b) => webhookPending.set(b.pending))(),
  });
  const webhookOldestAge: Gauge = new Gauge({
    name: `${metricPrefix}webhook_oldest_pending_age_seconds`,
    help: 'Age of the oldest waiting webhook delivery in seconds; 0 when none.',
    registers,
    collect: () => collectWith('webhook_backlog_age', webhookOldestAge, readWebhooks, (b) => webhookOldestAge.set(b.oldestAgeSeconds))(),
  });

  const jobs: Gauge<'status'> = new Gauge({
    name: `${metricPrefix}jobs`,
    help: 'Mint jobs per status (all brands).',
    labelNames: ['status'] as const,
    registers,
    collect: () =>
      collectWith(
        'jobs',
        jobs,
        sources.jobsByStatus,
        (counts) => {
          for (const status of jobStatuses) jobs.set({ status }, counts[status] ?? 0);
        },
        true,
      )(),
  });
  const outboxPending: Gauge = new Gauge({
    name: `${metricPrefix}outbox_pending_messages`,
    help: 'Outbox rows not yet relayed to the bus.',
    registers,
    collect: () => collectWith('outbox', outboxPending, readOutbox, (lag) => outboxPending.set(lag.pending))(),
  });
  const outboxOldestAge: Gauge = new Gauge({
    name: `${metricPrefix}outbox_oldest_age_seconds`,
    help: 'Age of the oldest outbox row in seconds; 0 when the outbox is empty.',
    registers,
    collect: () => collectWith('outbox_age', outboxOldestAge, readOutbox, (lag) => outboxOldestAge.set(Math.max(0, lag.oldestAgeMs) / 1000))(),
  });
  const consumerPending: Gauge = new Gauge({
    name: `${metricPrefix}consumer_pending_messages`,
    help: 'Mint job messages not yet delivered to any executor.',
    registers,
    collect: () => collectWith('consumer_pending', consumerPending, sources.consumerPending, (n) => consumerPending.set(n))(),
  });

  return {
    registry,
    rpcRequests: new Counter({
      name: `${metricPrefix}rpc_requests_total`,
      help: 'Finished RPCs by method and Connect code.',
      labelNames: ['method', 'code'] as const,
      registers,
    }),
    rpcDuration: new Histogram({
      name: `${metricPrefix}rpc_duration_seconds`,
      help: 'RPC latency in seconds by method and Connect code.',
      labelNames: ['method', 'code'] as const,
      buckets: requestBuckets,
      registers,
    }),
    httpRequests: new Counter({
      name: `${metricPrefix}http_requests_total`,
      help: 'Plain HTTP requests by method, route and status code.',
      labelNames: ['method', 'route', 'code'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: `${metricPrefix}http_request_duration_seconds`,
      help: 'Plain HTTP request latency in seconds by method, route and status code.',
      labelNames: ['method', 'route', 'code'] as const,
      buckets: requestBuckets,
      registers,
    }),
    unitsMinted: new Counter({ name: `${metricPrefix}units_minted_total`, help: 'Units written by committed chunks.', registers }),
    chunkDuration: new Histogram({
      name: `${metricPrefix}chunk_duration_seconds`,
      help: 'Duration of one chunk transaction in seconds.',
      buckets: chunkBuckets,
      registers,
    }),
    leaseRenewals: new Counter({ name: `${metricPrefix}lease_renewals_total`, help: 'Job leases extended by a committed chunk.', registers }),
    leaseLosses: new Counter({ name: `${metricPrefix}lease_losses_total`, help: 'Chunks rejected because another executor took the lease over.', registers }),
    scanEvents: new Counter({
      name: `${metricPrefix}scan_events_total`,
      help: 'Resolver scan events written, spilled to JetStream (database unreachable), replayed from the spill, dropped (queue full) or failed (write and spill failed).',
      labelNames: ['result'] as const,
      registers,
    }),
    jobs,
    outboxPending,
    outboxOldestAge,
    consumerPending,
    webhookDeliveries: new Counter({
      name: `${metricPrefix}webhook_deliveries_total`,
      help: 'Webhook delivery attempts by result (succeeded, retry, failed, lost).',
      labelNames: ['result'] as const,
      registers,
    }),
    webhookDuration: new Histogram({
      name: `${metricPrefix}webhook_delivery_duration_seconds`,
      help: 'Webhook delivery attempt latency in seconds.',
      buckets: requestBuckets,
      registers,
    }),
    webhookPending,
    webhookOldestAge,
    sourceErrors,
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** Counts mint jobs per status over all brands, every status present (0 when none). */
export async function countJobsByStatus(db: Database): Promise<Record<JobStatus, number>> {
  const found = await countJobsPerStatus(db.em.fork());
  return Object.fromEntries(jobStatuses.map((status) => [status, found.get(status) ?? 0])) as Record<JobStatus, number>;
}
