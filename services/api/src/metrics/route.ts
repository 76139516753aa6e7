// GET /metrics: the Prometheus exposition of the process's registry.

import type { Metrics } from '@mint/runtime';
import type { HttpRoutes } from '../server.ts';

/**
 * Serves `GET /metrics` (and HEAD) in the Prometheus text format; other paths pass on. Scraping
 * runs the scrape-time gauges' sources (a few small queries); a failing source drops its series
 * rather than failing the scrape.
 */
export function metricsRoutes(metrics: Pick<Metrics, 'render'>): HttpRoutes {
  return (req, res) => {
    const url = req.url ?? '/';
    if (url !== '/metrics' && !url.startsWith('/metrics?')) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('allow', 'GET, HEAD');
      res.end();
      return true;
    }
    return metrics.render().then(({ contentType, body }) => {
      res.statusCode = 200;
      res.setHeader('content-type', contentType);
      res.setHeader('cache-control', 'no-store');
      res.setHeader('content-length', Buffer.byteLength(body));
      if (req.method === 'HEAD') res.end();
      else res.end(body);
      return true;
    });
  };
}
