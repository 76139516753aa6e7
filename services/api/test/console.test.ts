// The web console's files at /console/ on the real server: media types and caching (index.html
// revalidated, hashed assets immutable), the same-origin security headers, HEAD, unknown names,
// the build-missing answer, and CONSOLE_ENABLED=false leaving the path to 404.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let buildDir: string;
const running: TestApi[] = [];
const index =
  '<!doctype html><html><head><script type="module" src="/console/assets/index-Ab12Cd34.js"></script></head><body><div id="root"></div></body></html>';
const script = 'console.log("console");';

beforeAll(async () => {
  app = await setupUseCases();
  buildDir = await mkdtemp(join(tmpdir(), 'console-build-'));
  await mkdir(join(buildDir, 'assets'));
  await writeFile(join(buildDir, 'index.html'), index);
  await writeFile(join(buildDir, 'assets/index-Ab12Cd34.js'), script);
  await writeFile(join(buildDir, 'assets/index-Ef56Gh78.css'), 'body{margin:0}');
});

afterAll(async () => {
  await Promise.all(running.map((api) => api.close()));
  await app?.close();
  await rm(buildDir, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startTestApi>[1]): Promise<string> {
  const api = await startTestApi(app, options);
  running.push(api);
  return api.baseUrl;
}

describe('/console/', () => {
  let base: string;
  beforeAll(async () => {
    base = await start({ consoleDir: buildDir });
  });

  it('serves index.html at /console/, revalidated on every load, with a same-origin content security policy', async () => {
    const res = await fetch(`${base}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe(index);
  });

  it('serves hashed assets with their media type, cached as immutable', async () => {
    const js = await fetch(`${base}/console/assets/index-Ab12Cd34.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await js.text()).toBe(script);
    const css = await fetch(`${base}/console/assets/index-Ef56Gh78.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await fetch(`${base}/console/assets/index-Ab12Cd34.js`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(script)));
    expect(await res.text()).toBe('');
  });

  it('redirects /console to /console/', async () => {
    const res = await fetch(`${base}/console`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/console/');
  });

  it('answers 404 for a name the build does not have, and never reads outside the build', async () => {
    const missing = await fetch(`${base}/console/assets/index-00000000.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ ok: false, error: 'not_found' });
    const escaped = await fetch(`${base}/console/..%2f..%2fpackage.json`);
    expect(escaped.status).toBe(404);
  });

  it('refuses writes with 405 and Allow', async () => {
    const res = await fetch(`${base}/console/`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('/console/ without a build', () => {
  it('answers 503 naming the build command', async () => {
    const base = await start({ consoleDir: join(buildDir, 'not-built') });
    const res = await fetch(`${base}/console/`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ok: false, error: 'console_not_built', message: expect.stringContaining('npm run build -w @mint/console') });
  });
});

describe('CONSOLE_ENABLED=false', () => {
  it('serves no console: /console/ and its assets answer 404', async () => {
    const base = await start({ consoleDir: buildDir, config: { consoleEnabled: false } });
    expect((await fetch(`${base}/console/`)).status).toBe(404);
    expect((await fetch(`${base}/console/assets/index-Ab12Cd34.js`)).status).toBe(404);
  });
});

describe('CONSOLE_OIDC_ISSUER and CONSOLE_OIDC_CLIENT_ID', () => {
  it('tell the console its sign-in provider in index.html and let it call that origin', async () => {
    const base = await start({
      consoleDir: buildDir,
      config: { consoleOidcIssuer: 'https://id.example.com/realms/brand', consoleOidcClientId: 'mint-"console"' },
    });
    const res = await fetch(`${base}/console/`);
    expect(await res.text()).toContain(
      '<meta name="mint-oidc-issuer" content="https://id.example.com/realms/brand"><meta name="mint-oidc-client-id" content="mint-&quot;console&quot;"></head>',
    );
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self' https://id.example.com;");
    // Without them, index.html is the build's and the console calls its own origin only.
    const plain = await fetch(`${await start({ consoleDir: buildDir })}/console/`);
    expect(await plain.text()).toBe(index);
    expect(plain.headers.get('content-security-policy')).toContain("connect-src 'self';");
  });
});
