import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { createRouter } from '../router.ts';
import { routeLabel, unmatchedRouteLabel } from './http.ts';

describe('routeLabel', () => {
  const router = createRouter([
    { methods: ['GET'], path: '/healthz', handler: () => undefined },
    { methods: ['GET'], path: '/v1/imports/products/:id', handler: () => undefined },
    { methods: ['GET'], path: '/r/*', handler: () => undefined },
  ]);
  const labelOf = (method: string, url: string): string => {
    const req = { method, url, headers: {}, httpVersionMajor: 1 } as unknown as IncomingMessage;
    const res = { setHeader: () => undefined, end: () => undefined, headersSent: false } as never;
    router.handle(req, res);
    return routeLabel(req);
  };

  it("is the matched route's path pattern, never the request path", () => {
    expect(labelOf('GET', '/healthz')).toBe('/healthz');
    expect(labelOf('GET', '/v1/imports/products/0b8e0f7a-3c1d-4c3e-9a57-2f1e0c9d8b7a?x=1')).toBe('/v1/imports/products/:id');
    expect(labelOf('GET', '/r/acme/01/09506000134352/21/ABC123')).toBe('/r/*');
    expect(labelOf('GET', '/r/other-brand/01/09506000134352')).toBe('/r/*');
    // A known path with another method (405) is still its route.
    expect(labelOf('DELETE', '/v1/imports/products/abc')).toBe('/v1/imports/products/:id');
  });

  it('is one label for every path outside the table', () => {
    expect(labelOf('GET', '/')).toBe(unmatchedRouteLabel);
    expect(labelOf('GET', '/wp-admin/setup-config.php')).toBe(unmatchedRouteLabel);
    expect(labelOf('GET', `/${'x'.repeat(500)}`)).toBe(unmatchedRouteLabel);
  });
});
