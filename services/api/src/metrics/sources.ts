// Where the API's scrape-time gauges read their values.

import { countJobsByStatus, type MetricSources } from '@mint/runtime';
import { outboxLag, type UseCaseContext } from '@mint/usecases';

/**
 * Jobs by status and outbox lag from the database behind `ctx`, and the mint consumer's pending
 * messages from `bus` when given (the production entry passes it; tests and dev mode may not).
 */
export function metricSources(ctx: UseCaseContext, bus?: { pending(kind: 'mint'): Promise<number> }): MetricSources {
  return {
    jobsByStatus: () => countJobsByStatus(ctx.db),
    outboxLag: () => outboxLag(ctx),
    ...(bus === undefined ? {} : { consumerPending: () => bus.pending('mint') }),
  };
}
