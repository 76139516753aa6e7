// The client package and mintctl's API commands against `npm start`'s dev mode, as a new user
// meets them: @mint/client reads the demo workspace; `mintctl login` keeps the token; `mintctl
// listen --forward-to` registers a temporary endpoint and forwards signed deliveries to a local
// handler (examples/webhook-receiver.mjs), which verifies them with the secret listen printed; `mintctl mint --watch` draws the
// job's progress to COMPLETED and names a unit to scan; stopping listen removes its endpoint. The
// examples (examples/node.mjs, curl.sh, buf-curl.sh, and browser/ in chromium through Vite) run
// as their README says.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMintClient, MintJobStatus } from '@mint/client';
import { chromium } from 'playwright-core';
import { createServer as createViteServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressBar } from '../../services/cli/src/remote.ts';
import { freePort } from '../support/ports.ts';

const repoRoot = join(import.meta.dirname, '..', '..');
const mintctl = join(repoRoot, 'services/cli/src/main.ts');

let server: ChildProcess;
let dataDir: string;
let configDir: string;
let api: string;
let token: string;
let brandId: string;
let productId: string;
/** The origin examples/browser is served from (Vite), which the API lets call it. */
let pageOrigin: string;
/** What `npm start` printed (its banner first). */
let serverOut: ReturnType<typeof output>;
/** Children a test started and may leave running when it fails. */
const children: ChildProcess[] = [];

/** Collects a child's output and resolves once `pattern` matched it. */
function output(child: ChildProcess): { text: () => string; waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray> } {
  let text = '';
  const waiters: (() => void)[] = [];
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.once('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  return {
    text: () => text,
    waitFor: (pattern, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern} in:\n${text}`)), timeoutMs);
        const check = () => {
          const m = pattern.exec(text);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          } else if (child.exitCode !== null) {
            clearTimeout(timer);
            reject(new Error(`exited ${child.exitCode} before ${pattern}:\n${text}`));
          } else waiters.push(check);
        };
        check();
      }),
  };
}

/** Runs mintctl to its end with the test's login file and no ambient credentials. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [mintctl, ...args], { cwd: repoRoot, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

function cliEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MINTCTL_CONFIG: join(configDir, 'login.json'), ...extra };
  for (const name of ['MINT_API_URL', 'MINT_TOKEN', 'MINT_BRAND']) if (!(name in extra)) delete env[name];
  return env;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mintctl-remote-data-'));
  configDir = await mkdtemp(join(tmpdir(), 'mintctl-remote-config-'));
  const port = await freePort();
  api = `http://127.0.0.1:${port}`;
  pageOrigin = `http://127.0.0.1:${await freePort()}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_POLL_MS: '50',
    CONSOLE_ENABLED: 'false',
    // Dev mode lets http://localhost:5173 (Vite's usual port) call it; the test's Vite runs on a free port.
    CORS_ALLOWED_ORIGINS: pageOrigin,
  };
  for (const name of ['DATABASE_URL', 'NATS_URL', 'PUBLIC_BASE_URL', 'PACK_STORE_DIR']) delete env[name];
  server = spawn(process.execPath, [mintctl, 'dev'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = output(server);
  serverOut = out;
  token = (await out.waitFor(/export TOKEN=(\S+)/))[1]!;
  brandId = (await out.waitFor(/brand_id\s+(\S+)/))[1]!;
  productId = (await out.waitFor(/product_id\s+(\S+)/))[1]!;
}, 150_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  await rm(dataDir, { recursive: true, force: true });
  await rm(configDir, { recursive: true, force: true });
}, 60_000);

describe('@mint/client and mintctl against npm start', () => {
  it('the client package reads the workspace with typed clients', async () => {
    const client = createMintClient({ baseUrl: api, token });
    const { memberships } = await client.account.listMyMemberships({});
    expect(memberships.map((m) => m.brandId)).toContain(brandId);
    const kpis = await client.mint.getMintKpis({ brandId });
    expect(typeof kpis.totalTokensMinted).toBe('bigint');
    expect(() => createMintClient({} as never)).toThrow(/baseUrl/);
  });

  it("the banner's curl lines mint 10,000 units and follow the job to COMPLETED, run as printed", async () => {
    const submit = (await serverOut.waitFor(/Mint 10,000 serial units:\n {2}(curl [^\n]*\\\n[^\n]*)\n/))[1]!;
    const follow = (await serverOut.waitFor(/Follow the job[^\n]*:\n {2}(curl [^\n]*\\\n[^\n]*)\n/))[1]!;
    const sh = (command: string) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn('bash', ['-c', command], { env: { ...process.env, TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${command}: exit ${code}\n${stderr}`))));
      });
    const job = JSON.parse(await sh(submit)) as { ok: boolean; mint_job_id: string; requested_quantity?: number };
    expect(job).toMatchObject({ ok: true });
    expect(follow).toContain('<mint_job_id>');
    let state: { job?: { status: string; minted_quantity?: number } } = {};
    for (let i = 0; i < 240 && state.job?.status !== 'MINT_JOB_STATUS_COMPLETED'; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      state = JSON.parse(await sh(follow.replace('<mint_job_id>', job.mint_job_id)));
    }
    expect(state.job).toMatchObject({ status: 'MINT_JOB_STATUS_COMPLETED', minted_quantity: 10_000 });
  }, 150_000);

  it('examples/node.mjs mints, follows, lists and scans as it says', async () => {
    const child = spawn(process.execPath, [join(repoRoot, 'examples/node.mjs')], {
      cwd: repoRoot,
      env: { ...process.env, MINT_API_URL: api, MINT_TOKEN: token, MINT_BRAND: brandId, MINT_PRODUCT: productId },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = output(child);
    await new Promise((resolve) => child.once('exit', resolve));
    expect(child.exitCode, out.text()).toBe(0);
    expect(out.text()).toMatch(/^COMPLETED 1000\/1000$/m);
    expect(out.text()).toMatch(/^unit [0-9A-Z]{20} http:\/\/\S+\/01\/\d{14}\/21\/[0-9A-Z]{20}$/m);
    const serial = /^unit ([0-9A-Z]{20})/m.exec(out.text())![1]!;
    expect(out.text()).toMatch(new RegExp(`^scan: 200 unit ${serial} active target=`, 'm'));
    expect(out.text()).toMatch(/^webhook endpoint \S+ secret whsec_/m);
    expect(out.text()).toMatch(/^removed webhook endpoint \S+$/m);
    expect((await createMintClient({ baseUrl: api, token }).webhooks.listWebhookEndpoints({ brandId })).endpoints).toHaveLength(0);
  }, 60_000);

  it('examples/curl.sh mints, follows, lists, scans and registers an endpoint with curl', async () => {
    const child = spawn('bash', [join(repoRoot, 'examples/curl.sh')], {
      cwd: repoRoot,
      env: { ...process.env, API: api, TOKEN: token, BRAND: brandId, PRODUCT: productId },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const err = output(child);
    await new Promise((resolve) => child.once('exit', resolve));
    expect(child.exitCode, err.text()).toBe(0);
    expect(err.text()).toContain('"status":"MINT_JOB_STATUS_COMPLETED"');
    const url = /^scan (http:\/\/\S+\/01\/\d{14}\/21\/([0-9A-Z]{20}))$/m.exec(stdout);
    expect(url, stdout).not.toBeNull();
    expect(stdout).toContain(`{"unit":"${url![2]}","status":"active"`);
    expect(stdout).toMatch(/^\{"endpoint":"\S+","secret":"whsec_\S+"\}$/m);
    expect(stdout).toMatch(/^removed endpoint \S+$/m);
    expect((await createMintClient({ baseUrl: api, token }).webhooks.listWebhookEndpoints({ brandId })).endpoints).toHaveLength(0);
  }, 90_000);

  it('examples/buf-curl.sh lists the services by reflection, mints, streams the job to COMPLETED and scans over gRPC', async () => {
    const child = spawn('bash', [join(repoRoot, 'examples/buf-curl.sh')], {
      cwd: repoRoot,
      env: { ...process.env, API: api, TOKEN: token, BRAND: brandId, PRODUCT: productId },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = output(child);
    await new Promise((resolve) => child.once('exit', resolve));
    expect(child.exitCode, out.text()).toBe(0);
    expect(out.text()).toMatch(/^mint\.v1\.MintService$/m);
    expect(out.text()).toMatch(/"status": "MINT_JOB_STATUS_COMPLETED",\s+"mintedQuantity": 1000,/);
    expect(out.text()).toMatch(/^\{"unit":"[0-9A-Z]{20}","status":"active"\}$/m);
    expect(out.text()).toMatch(/"totalTokensMinted": "\d+"/);
  }, 120_000);

  it('examples/browser mints from a page in chromium and shows the job to COMPLETED', async () => {
    const vite: ViteDevServer = await createViteServer({
      root: join(repoRoot, 'examples/browser'),
      configFile: false,
      logLevel: 'warn',
      server: { host: '127.0.0.1', port: Number(new URL(pageOrigin).port), strictPort: true },
      cacheDir: join(dataDir, 'vite-cache'),
    });
    await vite.listen();
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(String(error)));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(`${pageOrigin}/#${new URLSearchParams({ api, token, brand: brandId })}`);
      await page.getByLabel('Product id').fill(productId);
      await page.getByRole('button', { name: 'Mint' }).click();
      await page
        .locator('#log')
        .filter({ hasText: /^COMPLETED 100\/100$/m })
        .waitFor({ timeout: 60_000 })
        .catch(async (error: unknown) => {
          throw new Error(`${String(error)}\nlog: ${await page.locator('#log').textContent()}\n${problems.join('\n')}`);
        });
      expect(problems).toEqual([]);
      expect(await page.locator('#log').textContent()).not.toMatch(/error|blocked/i);
    } finally {
      await browser.close();
      await vite.close();
    }
  }, 120_000);

  it('login refuses a bad token, then keeps a good one readable by its owner only, never printing it', async () => {
    const refused = await run(['login', '--api', api, '--token', 'not-a-token']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/mintctl: .*unauthenticated|mintctl: .*token/i);

    const done = await run(['login', '--api', api, '--token', token]);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`(${brandId})`);
    expect(done.stdout).not.toContain(token);
    const file = join(configDir, 'login.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ api, token, brand: brandId });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('listen forwards signed deliveries that verify with the secret it printed; mint --watch follows the job; stopping listen removes the endpoint', async () => {
    const receiverPort = await freePort();
    const listen = spawn(process.execPath, [mintctl, 'listen', '--forward-to', `http://127.0.0.1:${receiverPort}/webhooks`, '--events', 'mint_job_completed'], {
      cwd: repoRoot,
      env: cliEnv({}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(listen);
    const listenOut = output(listen);
    const secret = (await listenOut.waitFor(/secret[^:]*: (whsec_\S+)/, 30_000))[1]!;
    // The handler a developer runs: examples/webhook-receiver.mjs, verifying with the printed secret.
    const handler = spawn(process.execPath, [join(repoRoot, 'examples/webhook-receiver.mjs'), String(receiverPort)], {
      cwd: repoRoot,
      env: { ...process.env, MINT_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(handler);
    const handlerOut = output(handler);
    await handlerOut.waitFor(/listening on/, 15_000);

    try {
      const minted = await run(['mint', '--product', productId, '--quantity', '5000', '--watch']);
      expect(minted.code, minted.stderr).toBe(0);
      expect(minted.stdout).toMatch(/^job \S+ \(batch \S+\): QUEUED$/m);
      expect(minted.stdout).toMatch(/COMPLETED: 5,000 of 5,000 minted/);
      expect(minted.stderr).toContain('100%  5,000/5,000');
      // It names a unit to scan next, and the line it prints scans it.
      const unit = /^first unit: ([0-9A-Z]{20}) {2}(http:\/\/\S+\/01\/\d{14}\/21\/([0-9A-Z]{20}))$/m.exec(minted.stdout);
      expect(unit, minted.stdout).not.toBeNull();
      expect(unit![3]).toBe(unit![1]);
      expect(minted.stdout).toContain(`scan it: curl -H 'Accept: application/json' ${unit![2]}`);
      const scan = await fetch(unit![2]!, { headers: { accept: 'application/json' } });
      expect(scan.status).toBe(200);
      expect(await scan.json()).toMatchObject({ unit: { serial: unit![1], status: 'active' } });
      const jobId = /^job (\S+)/m.exec(minted.stdout)![1]!;
      await listenOut.waitFor(/mint_job_completed .*-> (\d+)/, 30_000);
      expect(listenOut.text()).toMatch(/mint_job_completed {2}msg_\S+ {2}-> 204/);
      expect(handlerOut.text()).toMatch(new RegExp(`^verified mint_job_completed mint_batch \\S+ .*"mint_job_id":"${jobId}"`, 'm'));
      expect(handlerOut.text()).not.toContain('refused');
    } finally {
      handler.kill('SIGTERM');
    }

    const client = createMintClient({ baseUrl: api, token });
    expect((await client.webhooks.listWebhookEndpoints({ brandId })).endpoints).toHaveLength(1);
    listen.kill('SIGINT');
    await listenOut.waitFor(/removed endpoint/, 15_000);
    await new Promise((resolve) => (listen.exitCode === null ? listen.once('exit', resolve) : resolve(null)));
    expect(listen.exitCode).toBe(0);
    expect((await client.webhooks.listWebhookEndpoints({ brandId })).endpoints).toHaveLength(0);
    expect(MintJobStatus.COMPLETED).toBeGreaterThan(0);
  }, 120_000);

  it('mint refuses bad input by name before calling the API', async () => {
    const bad = await run(['mint', '--product', productId, '--quantity', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--quantity must be a whole number from 1 to 1000000, not "lots"');
    const noToken = await run(['mint', '--product', productId, '--quantity', '5'], { MINTCTL_CONFIG: join(configDir, 'none.json') });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no session token');
  });

  it('draws a progress bar', () => {
    expect(progressBar(5000, 10000, 10)).toBe('[#####.....]  50%  5,000/10,000');
    expect(progressBar(0, 0, 4)).toBe('[....]   0%  0/0');
  });
});
