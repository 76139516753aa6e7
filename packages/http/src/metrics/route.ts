// GET /metrics: the Prometheus exposition of the process's registry.

import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpProblem } from '../errors.ts';
import { send } from '../respond.ts';
import type { Route } from '../router.ts';
import type { Metrics } from './metrics.ts';

/** Options of {@link metricsRoute}. */
export interface MetricsRouteOptions {
  /** When set, a scrape must carry `Authorization: Bearer <token>`; others get 401. */
  readonly token?: string | undefined;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * `GET /metrics` (and HEAD) in the Prometheus text format. Scraping runs the scrape-time gauges'
 * sources (a few small queries); a failing source drops its series rather than failing the scrape.
 * The exposition shows job counts of every tenant: restrict it with `options.token`, a port of
 * its own, or the network policy.
 */
export function metricsRoute(metrics: Pick<Metrics, 'render'>, options: MetricsRouteOptions = {}): Route {
  const expected = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);
  return {
    methods: ['GET', 'HEAD'],
    path: '/metrics',
    handler: async ({ req, res }) => {
      if (expected !== undefined) {
        const sent = req.headers.authorization;
        // Compared as digests, so neither the length nor the content leaks through timing.
        if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), expected)) {
          res.setHeader('www-authenticate', 'Bearer');
          throw new HttpProblem(401, 'unauthenticated', 'metrics need the scrape token (Authorization: Bearer <token>)');
        }
      }
      const { contentType, body } = await metrics.render();
      send(req, res, 200, contentType, body);
    },
  };
}
