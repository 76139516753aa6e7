// Dev mode's CORS: browsers on its own origin and on Vite's dev server may call the API with
// credentials unless CORS_ALLOWED_ORIGINS says otherwise; production allows none by default.

import { createCors } from '@mint/http';
import { loadConfig } from '@mint/runtime';
import { describe, expect, it } from 'vitest';
import { devOrigins } from '../src/dev.ts';

/** The preflight answer `origins` give `origin`: its status and allowed origin. */
function preflight(origins: readonly string[], origin: string): { status: number; allowOrigin: unknown } {
  const headers = new Map<string, unknown>();
  let status = 0;
  const res = {
    statusCode: 0,
    headersSent: false,
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), value),
    end: () => {
      status = res.statusCode;
    },
  };
  const req = { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } };
  createCors(origins)(req as never, res as never);
  return { status, allowOrigin: headers.get('access-control-allow-origin') };
}

describe('dev mode CORS', () => {
  it("allows the dev server's own origin and Vite's, and nothing else, when CORS_ALLOWED_ORIGINS is unset", () => {
    const origins = devOrigins(loadConfig({ PORT: '8080' }));
    expect(preflight(origins, 'http://localhost:8080')).toEqual({ status: 204, allowOrigin: 'http://localhost:8080' });
    expect(preflight(origins, 'http://localhost:5173')).toEqual({ status: 204, allowOrigin: 'http://localhost:5173' });
    expect(preflight(origins, 'https://evil.example').status).toBe(403);
  });

  it('takes CORS_ALLOWED_ORIGINS as it is when set', () => {
    const origins = devOrigins(loadConfig({ PORT: '8080', CORS_ALLOWED_ORIGINS: 'https://console.example.com' }));
    expect(origins).toEqual(['https://console.example.com']);
    expect(preflight(origins, 'http://localhost:8080').status).toBe(403);
  });

  it('allows no origin in production by default', () => {
    expect(loadConfig({}).corsAllowedOrigins).toBeUndefined();
  });
});
