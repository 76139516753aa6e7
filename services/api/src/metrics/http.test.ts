import { describe, expect, it } from 'vitest';
import { routeLabel } from './http.ts';

describe('routeLabel', () => {
  it('keeps word segments and replaces ids, GTINs, serials and tokens with :param', () => {
    expect(routeLabel('/healthz')).toBe('/healthz');
    expect(routeLabel('/')).toBe('/');
    expect(routeLabel('/v1/mint/jobs/0b8e0f7a-3c1d-4c3e-9a57-2f1e0c9d8b7a/units')).toBe('/v1/mint/jobs/:param/units');
    expect(routeLabel('/r/acme/01/09506000134352/21/ABC123')).toBe('/r/:param/:param/:param/:param/:param');
    expect(routeLabel('/r/other-brand/01/09506000134352')).toBe('/r/:param/:param/:param');
    expect(routeLabel('/downloads/packs/eyJhbGciOi.sig')).toBe('/downloads/packs/:param');
    expect(routeLabel('/v1/products/')).toBe('/v1/products/:param');
  });
});
