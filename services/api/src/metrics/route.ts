// GET /metrics: the Prometheus exposition of the process's registry.

import { send, type Route } from '@mint/http';
import type { Metrics } from '@mint/runtime';

/**
 * `GET /metrics` (and HEAD) in the Prometheus text format. Scraping runs the scrape-time gauges'
 * sources (a few small queries); a failing source drops its series rather than failing the scrape.
 */
export function metricsRoute(metrics: Pick<Metrics, 'render'>): Route {
  return {
    methods: ['GET', 'HEAD'],
    path: '/metrics',
    handler: async ({ req, res }) => {
      const { contentType, body } = await metrics.render();
      send(req, res, 200, contentType, body);
    },
  };
}
