// The web console end to end in a real browser: Debian's chromium driven by playwright-core
// against `npm start`'s dev mode (API and executor in one process, on a free port with a data
// folder of its own). Signs in through the printed link, imports products (a refused row shows
// its error), mints 10,000 serial units and follows the job to COMPLETED, sees the KPIs change,
// downloads the batch's pack and checks its manifest's SHA-256 sums, finds that pack again once the
// brand's newest 100 packs are of another batch (and sees the page stop asking), sees a blocked product's
// reasons. Every screen is photographed at 1280 and 390 px into test/artifacts/, and each layout is
// checked to hold (no sideways scrolling) and to label every control.
//
// Needs /usr/bin/chromium (.ci/run installs Debian's `chromium` package when it is missing).

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, consoleBuildIsStale } from '../../scripts/build-console.ts';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.ts';
import { freePort } from '../support/ports.ts';
import { untar } from '../support/untar.ts';

const repoRoot = join(import.meta.dirname, '../..');
const artifacts = join(repoRoot, 'test/artifacts');
const chromiumPath = '/usr/bin/chromium';
const widths = [1280, 390] as const;
/** How long a screen may take to show what it fetched (a cold embedded database answers its first reads slowly). */
const soon = { timeout: 15_000, interval: 100 };
/** axe-core's browser build, injected into each screen photographed. */
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let dataDir: string;
let profileDir: string;
let server: ChildProcess;
let output = '';
let signInLink: string;
let token: string;
let browser: BrowserContext;
let page: Page;
let provider: OidcProvider;
/** The API key the console created (it must never reach the server's output). */
let apiKeySecret = '';
/** The passport access key the console issued (it must never reach the server's output either). */
let passportKeySecret = '';

/** Waits until the dev server printed its sign-in link (or exited). */
function waitForLink(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no sign-in link within 90 s:\n${output}`)), 90_000);
    const look = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const link = /http:\/\/localhost:\d+\/console\/#token=\S+/.exec(output);
      if (link !== null) {
        clearTimeout(timer);
        resolve(link[0]);
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) => reject(new Error(`npm start's dev mode exited with ${code}:\n${output}`)));
  });
}

/** Photographs the current screen at both widths (full page) and checks its layout and labels at each. */
async function photograph(name: string): Promise<void> {
  for (const width of widths) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.screenshot({ path: join(artifacts, `console-${name}-${width}.png`), fullPage: true });
    // The page never scrolls sideways: wide tables scroll inside their own box.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow, `${name} at ${width} px scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  // Every control has an accessible name (a <label>, aria-label, or its text).
  // (Evaluated in the page as a string: the test's own TypeScript has no DOM types.)
  const unlabelled = await page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((el) => (el.labels === undefined || el.labels === null || el.labels.length === 0) && !el.getAttribute('aria-label')
      && (el.textContent ?? '').trim() === '' && el.closest('label') === null)
    .map((el) => el.outerHTML.slice(0, 80))`);
  expect(unlabelled, name).toEqual([]);
  // axe-core finds no serious or critical accessibility violation.
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const violations = await page.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })) })))`);
  expect(violations, `${name}: axe-core violations`).toEqual([]);
}

/** Calls an RPC of the API as the signed-in user (Connect JSON), expecting success. */
async function call(service: string, method: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const origin = new URL(signInLink).origin;
  const brandId = new URLSearchParams(signInLink.split('#')[1]).get('brand')!;
  const res = await fetch(`${origin}/mint.v1.${service}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ brand_id: brandId, ...body }),
  });
  expect(res.status, `${method}: ${await res.clone().text()}`).toBe(200);
  return (await res.json()) as Record<string, any>;
}

/** Opens a screen from the navigation. */
async function go(screen: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: screen, exact: true }).click();
}

/** The value shown on the Overview's KPI card titled `title`. */
async function kpi(title: string): Promise<string> {
  return (await page.locator(`[data-kpi="${title}"]`).textContent()) ?? '';
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: apt-get install -y --no-install-recommends chromium (.ci/run does it)`);
  // What `npm start` does first: build the console when it is missing or stale.
  if (consoleBuildIsStale()) buildConsole();
  mkdirSync(artifacts, { recursive: true });
  dataDir = await mkdtemp(join(tmpdir(), 'console-e2e-data-'));
  profileDir = await mkdtemp(join(tmpdir(), 'console-e2e-profile-'));
  const port = await freePort();
  // A real OpenID Connect provider the console signs in with; the API takes its access tokens (JWKS) beside its own.
  provider = await startOidcProvider({ consoleOrigin: `http://localhost:${port}`, accessTokenTtl: 20 });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    AUTH_JWKS_URL: provider.jwksUrl,
    CONSOLE_OIDC_ISSUER: provider.issuer,
    CONSOLE_OIDC_CLIENT_ID: provider.clientId,
  };
  // The embedded database and the in-process bus, as `npm ci && npm start` gives a new user.
  for (const name of ['DATABASE_URL', 'NATS_URL', 'PUBLIC_BASE_URL', 'PACK_STORE_DIR', 'CONSOLE_ENABLED']) delete env[name];
  // The webhook test's receiver listens on loopback.
  env['WEBHOOK_ALLOW_LOOPBACK'] = 'true';
  server = spawn(process.execPath, [join(repoRoot, 'services/cli/src/main.ts'), 'dev'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  signInLink = await waitForLink(server);
  token = new URLSearchParams(signInLink.split('#')[1]).get('token')!;
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  page = await browser.newPage();
}, 150_000);

afterAll(async () => {
  await browser?.close();
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  await provider?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(profileDir, { recursive: true, force: true });
}, 60_000);

describe('the web console in chromium against npm start', () => {
  let kpiBefore: string;
  let batchUrl: string;

  it('signs in through the printed link and drops the token from the address bar', async () => {
    await page.goto(signInLink);
    await expect.poll(() => page.url(), soon).toMatch(/\/console\/#\/overview$/);
    await expect.poll(() => kpi('Tokens minted'), soon).toMatch(/^\d[\d,]*$/);
    kpiBefore = await kpi('Tokens minted');
    expect(await page.getByRole('heading', { name: 'Overview' }).isVisible()).toBe(true);
    await photograph('overview');
  });

  it("signs in with a token alone and picks the brand from the user's memberships", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Session token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The API's own words for a malformed token.
    await expect.poll(() => page.getByRole('alert').count(), soon).toBe(1);
    await page.getByLabel('Session token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByLabel('Brand workspace').locator('option').allTextContents(), soon).toEqual(['Demo Brand (owner)']);
    await photograph('sign-in');
    await page.getByRole('button', { name: 'Open the console' }).click();
    await expect.poll(() => page.getByText('Demo Brand (owner)').count(), soon).toBe(1);
    await expect.poll(() => kpi('Tokens minted'), soon).toBe(kpiBefore);
  });

  it('imports a product CSV with the statuses as the table shows them, and shows the refused row with its error listing them', async () => {
    await go('Products');
    expect(await page.locator('#csv-hint').textContent()).toBe(
      'commercial_status: draft, active, suspended, discontinued; mint_readiness_status: not_ready, ready; in any case.',
    );
    await page.getByLabel(/CSV file/).setInputFiles({
      name: 'products.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        'sku,name,gtin,commercial_status,mint_readiness_status,passport_url\nE2E-BLOCKED,Suspended jacket,,suspended,not_ready,\nE2E-BAD,Bad row,,SOMETIMES,READY,\n',
      ),
    });
    await page.getByRole('button', { name: 'Import products' }).click();
    await expect.poll(() => page.getByTestId('import-status').textContent(), { timeout: 20_000 }).toBe('completed');
    const refused = page.locator('table', { has: page.locator('caption', { hasText: 'Refused rows' }) });
    expect(await refused.locator('tbody tr').count()).toBe(1);
    expect(await refused.locator('tbody tr').first().textContent()).toContain('commercial_status');
    expect(await refused.locator('tbody tr').first().textContent()).toContain('must be one of draft, active, suspended, discontinued (in any case)');
    await expect.poll(() => page.getByRole('cell', { name: 'E2E-BLOCKED' }).count(), soon).toBe(1);
    await photograph('products');
  });

  it('submits a 10,000-unit serial request and follows the job live to COMPLETED', async () => {
    await go('Mint');
    await page.getByLabel('Product', { exact: true }).selectOption({ label: 'DEMO-SKU-1: Demo Product' });
    await page.getByLabel('Quantity', { exact: true }).fill('10000');
    await page.getByLabel(/Serial/).check();
    await page.getByLabel('Active at mint').check();
    await page.getByRole('button', { name: 'Submit mint request' }).click();
    await expect.poll(() => page.getByTestId('job-status').textContent(), { timeout: 90_000, interval: 250 }).toBe('COMPLETED');
    expect(await page.getByText('10,000 / 10,000 (100%)').count()).toBe(1);
    await photograph('mint');
    batchUrl = (await page.getByRole('link', { name: 'Open the batch' }).getAttribute('href'))!;
  }, 120_000);

  it('shows the KPIs changed by the 10,000 units', async () => {
    await go('Overview');
    const before = Number(kpiBefore.replaceAll(',', ''));
    await expect.poll(() => kpi('Tokens minted'), soon).toBe((before + 10_000).toLocaleString('en-US'));
    expect(Number((await kpi('Batches created')).replaceAll(',', ''))).toBeGreaterThanOrEqual(1);
    await photograph('overview-after');
  });

  it('lists the batch and downloads its pack, whose manifest matches the files', async () => {
    await go('Batches');
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBeGreaterThan(0);
    await photograph('batches');
    await page.locator(`a[href="${batchUrl}"]`).first().click();
    await expect.poll(() => page.getByTestId('pack-status').first().textContent(), { timeout: 60_000 }).toBe('ready');
    await expect
      .poll(
        () =>
          page
            .locator('section', { has: page.getByRole('heading', { name: 'Units', exact: true }) })
            .locator('tbody tr')
            .count(),
        soon,
      )
      .toBe(20);
    expect(await page.getByRole('navigation', { name: 'Units pages' }).getByText('Page 1').count()).toBe(1);
    await photograph('batch');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Download pack/ }).click()]);
    const files = untar(await readFile((await download.path())!));
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8')) as {
      row_count: number;
      unit_count: number;
      files: { name: string; sha256: string; bytes: number }[];
    };
    expect(manifest.unit_count).toBe(10_000);
    expect(manifest.row_count).toBe(10_000);
    expect(manifest.files.map((f) => f.name).sort()).toEqual(['epcis.json', 'units.csv', 'units.jsonl']);
    for (const file of manifest.files) {
      const bytes = files.get(file.name)!;
      expect(bytes.byteLength, file.name).toBe(file.bytes);
      expect(createHash('sha256').update(bytes).digest('hex'), file.name).toBe(file.sha256);
    }
  }, 90_000);

  it('asks for a label pack of a seq range in DataMatrix after previewing one label, and downloads it', async () => {
    // A range the API refuses: the error names the field.
    await page.getByLabel('From seq').fill('9');
    await page.getByLabel('To seq').fill('3');
    await page.getByRole('button', { name: 'Ask for the pack' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'seq' }).count(), soon).toBe(1);
    // The field the API named is marked invalid for assistive technology.
    expect(await page.getByLabel('To seq').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('From seq').getAttribute('aria-invalid')).toBe('false');
    await page.getByLabel('From seq').fill('3');
    await page.getByLabel('To seq').fill('7');
    await page.getByLabel('CSV (units.csv)').check();
    await page.getByLabel('PDF label sheets').uncheck();
    await page.getByLabel('SVG labels').check();
    await page.getByLabel('ZPL (Zebra printers)').check();
    await page.getByLabel('GS1 DataMatrix').check();
    await page.getByLabel('Label width (mm)').fill('50');
    await page.getByLabel('Label height (mm)').fill('30');
    // The preview draws the first unit of the range before anything is asked for.
    await expect.poll(() => page.getByTestId('label-preview').locator('svg').count(), soon).toBe(1);
    expect(await page.getByTestId('label-preview').textContent()).toContain('(21) ');
    expect(await page.getByRole('figure').textContent()).toContain('50 × 30 mm, GS1 DataMatrix');
    await photograph('batch-pack-form');
    await page.getByRole('button', { name: 'Ask for the pack' }).click();
    await expect.poll(() => page.getByTestId('pack-summary').allTextContents(), soon).toContain('csv, svg, zpl; seq 3–7; datamatrix; request');
    const item = page.locator('.packs li', { hasText: 'seq 3–7' });
    await expect.poll(() => item.getByTestId('pack-status').textContent(), { timeout: 60_000 }).toBe('ready');
    const [download] = await Promise.all([page.waitForEvent('download'), item.getByRole('button', { name: /^Download pack/ }).click()]);
    const files = untar(await readFile((await download.path())!));
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8')) as { unit_count: number; files: { name: string }[] };
    expect(manifest.unit_count).toBe(5);
    expect(manifest.files.map((f) => f.name).sort()).toEqual(['labels-svg.tar', 'labels.zpl', 'units.csv']);
    expect(files.get('labels.zpl')!.toString('utf8').match(/\^XA/g)?.length).toBe(5);
  }, 90_000);

  it("keeps the batch's pack once the brand's newest 100 packs are of another batch, and stops asking once none is pending", async () => {
    const origin = new URL(signInLink).origin;
    const brandId = new URLSearchParams(signInLink.split('#')[1]).get('brand')!;
    const rpc = async (method: string, body: Record<string, unknown>) => {
      const res = await fetch(`${origin}/mint.v1.MintService/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ brand_id: brandId, ...body }),
      });
      expect(res.status, method).toBe(200);
      return (await res.json()) as Record<string, any>;
    };
    // Another batch, followed with the banner's GetMintJob call until COMPLETED, then 101 packs of it.
    expect(output).toContain(`${origin.replace('127.0.0.1', 'localhost')}/mint.v1.MintService/GetMintJob`);
    const product = /product_id\s+(\S+)/.exec(output)![1]!;
    const other = await rpc('SubmitMintRequest', {
      product_id: product,
      requested_quantity: 1,
      identity_mode: 'IDENTITY_MODE_SERIAL',
      activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
    });
    await expect
      .poll(async () => (await rpc('GetMintJob', { mint_job_id: other['mint_job_id'] }))['job'], { timeout: 30_000, interval: 250 })
      .toMatchObject({ status: 'MINT_JOB_STATUS_COMPLETED', minted_quantity: 1, requested_quantity: 1 });
    for (let i = 0; i < 101; i++) await rpc('CreatePayloadPack', { mint_batch_id: other['mint_batch_id'], formats: ['PACK_FORMAT_CSV'] });
    const newest = await rpc('ListPayloadPacks', { limit: 100 });
    expect(newest['packs'].every((p: { mint_batch_id: string }) => p.mint_batch_id === other['mint_batch_id'])).toBe(true);

    const asked: string[] = [];
    page.on('request', (r) => (r.url().endsWith('/ListPayloadPacks') ? asked.push(r.url()) : undefined));
    // A fresh load of the batch page (the session stays in sessionStorage), with nothing cached.
    await page.evaluate(`location.hash = ${JSON.stringify(batchUrl)}`);
    await page.reload();
    await expect.poll(() => page.getByTestId('pack-status').allTextContents(), soon).toEqual(['ready', 'ready']);
    // Its only pack is ready: the page stops asking.
    const before = asked.length;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(asked.length - before).toBe(0);
  }, 90_000);

  it("shows a blocked product's reasons in the API's words, submitted from the keyboard", async () => {
    await go('Mint');
    await page.getByLabel('Product', { exact: true }).selectOption({ label: 'E2E-BLOCKED: Suspended jacket' });
    await page.getByLabel('Quantity', { exact: true }).fill('5');
    await page.getByLabel('Quantity', { exact: true }).press('Enter');
    const blocked = page.getByRole('alert').filter({ hasText: 'The request is blocked' });
    await expect.poll(() => blocked.textContent(), soon).toContain('COMMERCIAL_STATUS_NOT_ACTIVE');
    expect(await blocked.textContent()).toContain('MINT_READINESS_NOT_READY');
    await photograph('mint-blocked');
  });

  it("activates a first_scan batch by hand, and shows the lifecycle move refused in the API's words where it is not enabled", async () => {
    await go('Mint');
    await page.getByLabel('Product', { exact: true }).selectOption({ label: 'DEMO-SKU-1: Demo Product' });
    await page.getByLabel('Quantity', { exact: true }).fill('25');
    await page.getByLabel(/Manual activation/).check();
    await page.getByRole('button', { name: 'Submit mint request' }).click();
    await expect.poll(() => page.getByTestId('job-status').textContent(), { timeout: 60_000, interval: 250 }).toBe('COMPLETED');
    await page.getByRole('link', { name: 'Open the batch' }).click();
    await page.getByRole('button', { name: 'Activate all units of this batch' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'activated' }).textContent(), soon).toBe('25 units activated.');
    await page.getByLabel('Move to').selectOption({ label: 'voided' });
    await page.getByRole('button', { name: 'Move batch' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), soon)
      .toBe(
        'SetMintBatchStatus is not enabled on this server: it is served when the API runs with ENABLE_SET_MINT_BATCH_STATUS=true (Helm chart value api.setMintBatchStatusEnabled=true)',
      );
  }, 90_000);

  it('filters the audit log by event type, entity type and entity id', async () => {
    await go('Events');
    await page.getByLabel('Event type').fill('mint_job_completed');
    await page.getByLabel('Entity type').fill('mint_batch');
    await page.getByLabel('Entity id').fill(batchUrl.split('/').pop()!);
    await page.getByLabel('Entity id').press('Enter');
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBe(1);
    expect(await page.locator('tbody tr').first().textContent()).toContain('mint_job_completed');
    await photograph('events');
  });

  it("finds a product's resolver links, and shows the API refusing a malformed GTIN in its own words", async () => {
    await go('Links');
    await page.getByLabel('GTIN', { exact: true }).fill('123');
    await page.getByRole('button', { name: 'Show links' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toMatch(/gtin/i);
    const gtin = /\(GTIN (\d+)\)/.exec(output)![1]!;
    await page.getByLabel('GTIN', { exact: true }).fill(gtin);
    await page.getByRole('button', { name: 'Show links' }).click();
    await expect.poll(async () => (await page.getByText('No links').count()) + (await page.locator('tbody tr').count()), soon).toBeGreaterThan(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    await photograph('links');
  });

  it("adds, changes and deletes a link, and imports links from a CSV with each refused row's error", async () => {
    const gtin = /\(GTIN (\d+)\)/.exec(output)![1]!;
    await page.getByLabel('GTIN of the link').fill(gtin);
    await page.getByLabel('Target (https)').fill('https://brand.example/care');
    await page.getByLabel('Title', { exact: true }).fill('Care guide');
    await page.getByLabel('Link type').fill('gs1:notALinkType');
    await page.getByRole('button', { name: 'Save link' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toMatch(/link_type/);
    expect(await page.getByLabel('Link type').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Link type').fill('gs1:instructions');
    await page.getByRole('button', { name: 'Save link' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Link added.' }).count(), soon).toBe(1);
    const row = page.locator('tbody tr', { hasText: 'Care guide' });
    await expect.poll(() => row.count(), soon).toBe(1);
    await row.getByRole('button', { name: /^Edit/ }).click();
    await page.getByLabel('Title', { exact: true }).fill('Care and repair guide');
    await page.getByRole('button', { name: 'Save link' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: 'Care and repair guide' }).count(), soon).toBe(1);
    await photograph('links-edit');
    await page
      .locator('tbody tr', { hasText: 'Care and repair guide' })
      .getByRole('button', { name: /^Delete/ })
      .click();
    await expect.poll(() => page.locator('tbody tr', { hasText: 'Care and repair guide' }).count(), soon).toBe(0);

    await page.getByLabel(/^CSV file \(gtin/).setInputFiles({
      name: 'links.csv',
      mimeType: 'text/csv',
      // A link type in another case is read as the vocabulary spells it.
      buffer: Buffer.from(
        `gtin,lot,serial,link_type,href,title,hreflang,media_type,context,fwqs,is_default\n${gtin},,,GS1:RecipeInfo,https://brand.example/recipes,Recipes,en|fr,,,,\n${gtin},,,gs1:pip,http://insecure.example/,Insecure,,,,,\n`,
      ),
    });
    await page.getByRole('button', { name: 'Import links' }).click();
    await expect.poll(() => page.getByTestId('link-import-status').textContent(), { timeout: 20_000 }).toBe('completed');
    const refused = page.locator('table', { has: page.locator('caption', { hasText: 'Refused rows' }) });
    expect(await refused.locator('tbody tr').count()).toBe(1);
    expect(await refused.locator('tbody tr').first().textContent()).toContain('href');
    await expect.poll(() => page.locator('tbody tr', { hasText: 'Recipes' }).count(), soon).toBe(1);
    await photograph('links-import');
  });

  it("lists a batch's units in seq order and finds a unit by a pasted scanned URL and by its serial", async () => {
    await page.evaluate(`location.hash = ${JSON.stringify(batchUrl)}`);
    const units = page.locator('section', { has: page.getByRole('heading', { name: 'Units', exact: true }) }).locator('tbody tr');
    await expect.poll(async () => (await units.locator('td:first-child').allTextContents()).slice(0, 3), soon).toEqual(['1', '2', '3']);
    await page.getByRole('navigation', { name: 'Units pages' }).getByRole('button', { name: 'Next' }).click();
    await expect.poll(async () => (await units.locator('td:first-child').allTextContents()).slice(0, 1), soon).toEqual(['21']);
    const url = (await units.nth(4).locator('td.url').textContent())!;
    const serial = (await units.nth(4).locator('code').textContent())!;
    await go('Units');
    await page.getByLabel('Serial or scanned URL').fill('https://id.brand.example/01/123');
    await page.getByRole('button', { name: 'Find unit' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toContain('names no unit');
    await page.getByLabel('Serial or scanned URL').fill(`${url}?linkType=all`);
    await page.getByRole('button', { name: 'Find unit' }).click();
    await expect.poll(() => page.getByTestId('unit-seq').textContent(), soon).toBe('25');
    expect(page.url()).toContain(`/units/`);
    await photograph('unit');
    // A deep link to the unit's page opens it on a fresh load.
    await page.reload();
    await expect.poll(() => page.getByTestId('unit-seq').textContent(), soon).toBe('25');
    // By keyboard alone: the navigation link, then Tab to the search field, type, Enter.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Units', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { name: 'Units', exact: true }).count(), soon).toBe(1);
    await photograph('units-search');
    for (let i = 0; i < 20 && (await page.evaluate<string>('document.activeElement?.id ?? ""')) !== 'unit-query'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.id ?? ""')).toBe('unit-query');
    await page.keyboard.type(serial);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('unit-seq').textContent(), soon).toBe('25');
  });

  it('charts scans with their scale by day, country and client class, and clears a suspect unit', async () => {
    const units = await call('MintService', 'ListMintUnits', { mint_batch_id: batchUrl.split('/').pop(), after_seq: 0, limit: 1 });
    const unit = units['units'][0] as { gtin: string; serial: string };
    const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
    const scan = { kind: 'serial', gtin: unit.gtin, identifier: unit.serial, outcome: 'resolved', representation: 'redirect' };
    const recorded = await call('ScanService', 'RecordScanEvents', {
      batch_key: 'e2e-scans-1',
      scans: [
        { ...scan, scanned_at: at(2), country: 'FR', client_class: 'SCAN_CLIENT_CLASS_BROWSER', count: 3 },
        { ...scan, scanned_at: at(1), country: 'DE', client_class: 'SCAN_CLIENT_CLASS_APP', count: 2 },
      ],
    });
    expect(recorded['accepted']).toBe(2);
    await go('Scans');
    await expect.poll(() => page.getByTestId('scan-total').textContent(), soon).toBe('5 scans');
    const chart = page.getByRole('img', { name: /Scans per day/ });
    expect(await chart.locator('text.axis-unit').textContent()).toBe('scans');
    expect((await chart.locator('.tick text').allTextContents()).length).toBeGreaterThanOrEqual(2);
    await expect.poll(() => page.locator('figure', { hasText: 'Top countries' }).locator('dt').allTextContents(), soon).toEqual(['FR', 'DE']);
    await expect
      .poll(async () => (await page.locator('figure', { hasText: 'Client classes' }).textContent())!.toLowerCase(), soon)
      .toMatch(/browser[\s\S]*app/);
    const alert = page.locator('tbody tr', { hasText: 'scan_clone_suspected' });
    await expect.poll(() => alert.count(), soon).toBe(1);
    await photograph('scans');
    await alert.getByRole('button', { name: /^Clear/ }).click();
    await alert.getByLabel('Reason').fill('Same shopper travelling');
    await alert.getByRole('button', { name: 'Clear the mark' }).click();
    await expect.poll(() => alert.getByRole('status').textContent(), soon).toMatch(/^Cleared \(was clone since/);
    await expect.poll(() => page.locator('tbody tr', { hasText: 'scan_suspect_cleared' }).count(), soon).toBe(1);
  });

  it('adds a webhook endpoint (secret shown once), shows deliveries with their attempts, redelivers and rotates the secret', async () => {
    let hits = 0;
    const receiver = createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(503).end('busy');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    try {
      await go('Webhooks');
      await page.getByLabel('URL (https)').fill('ftp://nowhere.example/');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), soon).toMatch(/url/);
      await page.getByLabel('URL (https)').fill(`http://127.0.0.1:${port}/hook`);
      await page.getByLabel(/^Event types/).fill('mint_job_completed');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect.poll(() => page.getByTestId('secret').textContent(), soon).toMatch(/^whsec_/);
      const first = await page.getByTestId('secret').textContent();
      await expect.poll(() => page.getByTestId('endpoint-state').allTextContents(), soon).toEqual(['enabled']);
      await photograph('webhooks');
      // An event of the endpoint's type: a one-unit job completing.
      const product = /product_id\s+(\S+)/.exec(output)![1]!;
      await call('MintService', 'SubmitMintRequest', {
        product_id: product,
        requested_quantity: 1,
        identity_mode: 'IDENTITY_MODE_SERIAL',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
      });
      await page.getByRole('link', { name: `http://127.0.0.1:${port}/hook` }).click();
      await expect.poll(() => page.getByTestId('delivery-attempts').first().textContent(), { timeout: 75_000, interval: 250 }).toMatch(/^[1-9]/);
      await expect.poll(() => page.locator('tbody tr').first().textContent(), soon).toContain('HTTP 503');
      await photograph('webhook-deliveries');
      const before = hits;
      await page
        .getByRole('button', { name: /^Redeliver/ })
        .first()
        .click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Delivery queued again.' }).count(), soon).toBe(1);
      await expect.poll(() => hits, { timeout: 20_000 }).toBeGreaterThan(before);
      await page.getByRole('link', { name: 'All endpoints' }).click();
      await page.getByRole('button', { name: /^Rotate secret/ }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'New signing secret' }).textContent(), soon).toMatch(/the old one signs until \d{4}-/);
      expect(await page.getByTestId('secret').textContent()).not.toBe(first);
      await page.getByRole('button', { name: /^Disable/ }).click();
      await expect.poll(() => page.getByTestId('endpoint-state').allTextContents(), soon).toEqual(['disabled']);
    } finally {
      receiver.close();
    }
  }, 150_000);

  it("sets the brand's resolver domain and shows the DNS record to create, and refuses a malformed one naming the field", async () => {
    await go('Domain');
    await page.getByLabel('Domain', { exact: true }).fill('not a domain');
    await page.getByRole('button', { name: 'Set domain' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toMatch(/domain/);
    await page.getByLabel('Domain', { exact: true }).fill('id.e2e-brand.example');
    await page.getByRole('button', { name: 'Set domain' }).click();
    await expect.poll(() => page.getByTestId('current-domain').textContent(), soon).toBe('id.e2e-brand.example');
    expect(await page.getByTestId('dns-name').textContent()).toBe('id.e2e-brand.example.');
    expect(await page.getByTestId('dns-value').textContent()).toBe(`${new URL(signInLink).hostname}.`);
    await photograph('domain');
    await page.getByRole('button', { name: 'Remove domain' }).click();
    await expect.poll(() => page.getByTestId('current-domain').textContent(), soon).toBe('none');
  });

  it('moves a seq range and a pasted list of serials, shows the refused units with why, and reconciles the batch with its CSV', async () => {
    const batchId = batchUrl.split('/').pop()!;
    const serialAt = async (seq: number) =>
      ((await call('MintService', 'ListMintUnits', { mint_batch_id: batchId, after_seq: seq - 1, limit: 1 }))['units'][0] as { serial: string }).serial;
    await page.evaluate(`location.hash = ${JSON.stringify(batchUrl)}`);
    const states = page.getByTestId('reconciliation-states');
    const count = async (table: typeof states, name: string) =>
      (await table
        .locator('tr', { has: page.getByRole('cell', { name, exact: true }) })
        .locator('td')
        .nth(1)
        .textContent()) ?? '';
    await expect.poll(() => count(states, 'commissioned'), soon).toBe('10,000');
    expect(await page.getByTestId('reconciliation-balanced').textContent()).toBe('Balanced');
    // A range the API refuses: the error names the field, which is marked invalid.
    await page.getByLabel('First seq', { exact: true }).fill('50');
    await page.getByLabel('Last seq', { exact: true }).fill('10');
    await page.getByRole('button', { name: 'Move serials' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'to_seq' }).count(), soon).toBe(1);
    expect(await page.getByLabel('Last seq', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('First seq', { exact: true }).getAttribute('aria-invalid')).toBe('false');
    // Decommission seq 101-120 as recalled.
    await page.getByLabel('First seq', { exact: true }).fill('101');
    await page.getByLabel('Last seq', { exact: true }).fill('120');
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'decommission (commissioned → decommissioned)' });
    await page.getByLabel('Decommissioning reason').selectOption({ label: 'recalled' });
    await page.getByRole('button', { name: 'Move serials' }).click();
    await expect.poll(() => page.getByTestId('move-status').textContent(), soon).toBe('done');
    expect(await page.getByTestId('move-moved').textContent()).toBe('20');
    expect(await page.getByTestId('move-refused').textContent()).toBe('0');
    await expect.poll(() => count(states, 'commissioned'), soon).toBe('9,980');
    // A pasted list: one recalled serial (wrong state), one commissioned, one no unit of the brand.
    const recalled = await serialAt(110);
    const fresh = await serialAt(140);
    await page.getByLabel('A pasted list of serials').check();
    const pasted = page.getByLabel(/^Serials \(one per line/);
    await pasted.fill(`${recalled}\n${fresh}\nNOT-A-SERIAL`);
    await page.getByLabel('Decommissioning reason').selectOption({ label: 'destroyed' });
    await page.getByRole('button', { name: 'Move serials' }).click();
    // A serial the API cannot read is refused naming it, and the list is marked invalid.
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'serials[2]' }).count(), soon).toBe(1);
    expect(await pasted.getAttribute('aria-invalid')).toBe('true');
    await pasted.fill(`${recalled}\n${fresh}\nNOTASERIALE2E`);
    await page.getByRole('button', { name: 'Move serials' }).click();
    await expect.poll(() => page.getByTestId('move-refused').textContent(), soon).toBe('2');
    expect(await page.getByTestId('move-moved').textContent()).toBe('1');
    const refusals = page.getByTestId('move-refusals').locator('tbody tr');
    expect(await refusals.count()).toBe(2);
    const refusedText = (await refusals.allTextContents()).join('\n');
    expect(refusedText).toMatch(new RegExp(`${recalled}.*wrong_state.*decommissioned.*recalled`));
    expect(refusedText).toMatch(/NOTASERIALE2E.*unknown/);
    // The reconciliation after both moves, per state and per reason, and its CSV.
    await expect.poll(() => count(states, 'decommissioned'), soon).toBe('21');
    expect(await count(states, 'commissioned')).toBe('9,979');
    const reasons = page.getByTestId('reconciliation-reasons');
    expect(await count(reasons, 'recalled')).toBe('20');
    expect(await count(reasons, 'destroyed')).toBe('1');
    expect(await page.getByTestId('reconciliation-balanced').textContent()).toBe('Balanced');
    await photograph('batch-serials');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the reconciliation CSV' }).click()]);
    const csv = await readFile((await download.path())!, 'utf8');
    expect(csv).toContain('commissioned,9979');
    expect(csv).toContain('recalled,20');
  }, 60_000);

  it('sets the SSCC prefix, mints cases and a pallet, packs units and cases, shows the aggregation tree, unpacks one and moves the pallet', async () => {
    const batchId = batchUrl.split('/').pop()!;
    const units = ((await call('MintService', 'ListMintUnits', { mint_batch_id: batchId, after_seq: 499, limit: 3 }))['units'] as { serial: string }[]).map(
      (u) => u.serial,
    );
    await go('Containers');
    // Minting before the brand has a company prefix: the API's refusal in its words.
    await page.getByLabel('Level', { exact: true }).fill('case');
    await page.getByLabel('How many').fill('2');
    await page.getByRole('button', { name: 'Mint containers' }).click();
    await expect.poll(() => page.getByRole('alert').count(), soon).toBe(1);
    // A malformed prefix is refused naming its field; a good one is saved from the keyboard.
    await page.getByLabel('GS1 company prefix').fill('12');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByLabel('GS1 company prefix').getAttribute('aria-invalid'), soon).toBe('true');
    await page.getByLabel('GS1 company prefix').fill('0614141');
    await page.getByLabel('GS1 company prefix').press('Enter');
    await expect.poll(() => page.getByTestId('container-settings').textContent(), soon).toMatch(/^Company prefix 0614141, nesting up to \d levels\.$/);
    await page.getByRole('button', { name: 'Mint containers' }).click();
    await expect.poll(() => page.getByTestId('minted-ssccs').locator('li').count(), soon).toBe(2);
    const cases = await page.getByTestId('minted-ssccs').locator('li').allTextContents();
    expect(cases[0]).toMatch(/^\d0614141\d{10}$/);
    await page.getByLabel('Level', { exact: true }).fill('pallet');
    await page.getByLabel('How many').fill('1');
    await page.getByRole('button', { name: 'Mint containers' }).click();
    await expect.poll(() => page.getByRole('heading', { name: /^Minted: 1 pallet/ }).count(), soon).toBe(1);
    const pallet = (await page.getByTestId('minted-ssccs').locator('li').allTextContents())[0]!;
    await photograph('containers');
    // The first case by its deep link: three units packed into it.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/containers/${cases[0]}`)}`);
    await expect.poll(() => page.getByTestId('container-counts').textContent(), soon).toBe('0 containers, 0 units');
    await page.getByLabel('Units to pack, by serial (one per line or comma-separated)').fill(units.join('\n'));
    await page.getByRole('button', { name: 'Pack', exact: true }).click();
    await expect.poll(() => page.getByTestId('packed').textContent(), soon).toBe('Packed 3 units and 0 containers.');
    await expect.poll(() => page.getByTestId('container-counts').textContent(), soon).toBe('0 containers, 3 units');
    // The pallet: a malformed SSCC refused naming it, then both cases packed from the keyboard.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/containers/${pallet}`)}`);
    await expect.poll(() => page.getByTestId('container-counts').textContent(), soon).toBe('0 containers, 0 units');
    const ssccs = page.getByLabel('Containers to pack, by SSCC');
    await ssccs.fill(`${cases[0]}\n123`);
    await page.getByRole('button', { name: 'Pack', exact: true }).click();
    await expect.poll(() => ssccs.getAttribute('aria-invalid'), soon).toBe('true');
    expect(await page.getByRole('alert').textContent()).toContain('ssccs[1]');
    await ssccs.fill(`${cases[0]}\n${cases[1]}`);
    await page.getByRole('button', { name: 'Pack', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('packed').textContent(), soon).toBe('Packed 0 units and 2 containers.');
    await expect.poll(() => page.getByTestId('container-counts').textContent(), soon).toBe('2 containers, 0 units');
    // The aggregation tree: the first case opened shows its three units.
    const tree = page.getByTestId('container-tree');
    await tree.locator('summary', { hasText: cases[0]! }).click();
    await expect.poll(() => tree.getByText(units[2]!).count(), soon).toBe(1);
    // The second case taken out by name.
    await page.getByLabel('Containers to unpack, by SSCC').fill(cases[1]!);
    await page.getByRole('button', { name: 'Unpack these' }).click();
    await expect.poll(() => page.getByTestId('unpacked').textContent(), soon).toBe('Unpacked 0 units and 1 containers.');
    await expect.poll(() => page.getByTestId('container-counts').textContent(), soon).toBe('1 containers, 0 units');
    expect((await call('MintService', 'GetContainer', { sscc: cases[1] }))['container']['parent_sscc']).toBeUndefined();
    expect((await call('MintService', 'GetContainer', { sscc: cases[0] }))['container']['parent_sscc']).toBe(pallet);
    await photograph('container');
    // A move on the pallet: every unit inside, through the case, decommissioned as recalled.
    await page.getByLabel('Decommissioning reason').selectOption({ label: 'recalled' });
    await page.getByRole('button', { name: "Move the container's units" }).click();
    await expect.poll(() => page.getByTestId('move-moved').textContent(), { timeout: 30_000, interval: 200 }).toBe('3');
    // The containers moved with their units: the pallet and the case in it are decommissioned (recalled); the case taken out is not.
    await expect.poll(async () => (await call('MintService', 'GetContainer', { sscc: pallet }))['container']['state'], soon).toBe('decommissioned');
    expect((await call('MintService', 'GetContainer', { sscc: cases[0] }))['container']['state']).toBe('decommissioned');
    expect((await call('MintService', 'GetContainer', { sscc: cases[1] }))['container']['state']).toBe('commissioned');
    await page.reload();
    await expect.poll(() => page.getByTestId('container-state').textContent(), soon).toBe('decommissioned (recalled)');
  }, 120_000);

  it("edits a product's passport section by section, shows the API's field error at its section, publishes two versions and lists them with what each changed", async () => {
    const productId = /product_id\s+(\S+)/.exec(output)![1]!;
    await go('Products');
    await page.locator('tbody tr', { hasText: 'DEMO-SKU-1' }).getByRole('link', { name: 'Passport' }).click();
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toBe('No draft yet. Not published.');
    await page.getByLabel('Content of description (JSON)').fill('{ "en": "Demo jacket", "de": "Demo-Jacke" }');
    await page.getByLabel('Content of materials (JSON)').fill('[{ "name": { "en": "Wool" }, "massFraction": 2 }]');
    await page.getByLabel('Who reads materials').selectOption('legitimate_interest');
    await page.getByRole('button', { name: 'Save draft' }).click();
    // The API's refusal, shown at the section it names; nothing was written.
    const materials = page.locator('fieldset[data-section="materials"]');
    await expect.poll(() => materials.getByRole('alert').textContent(), soon).toContain('content.materials[0].massFraction');
    expect(await page.getByLabel('Content of materials (JSON)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('fieldset[data-section="description"]').getByRole('alert').count()).toBe(0);
    expect(await page.getByTestId('passport-state').textContent()).toBe('No draft yet. Not published.');
    await page.getByLabel('Content of materials (JSON)').fill('[{ "name": { "en": "Wool" }, "massFraction": 0.4 }]');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Draft saved' }).textContent(), soon).toBe('Draft saved (revision 1).');
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toMatch(/^Draft revision 1, saved/);
    await page.getByRole('button', { name: 'Publish the saved draft' }).click();
    await expect.poll(() => page.getByTestId('published').textContent(), soon).toBe('Published version 1.');
    const row = page.getByTestId('passport-versions').locator('tbody tr');
    await expect.poll(() => row.count(), soon).toBe(1);
    const cells = await row.first().locator('td').allTextContents();
    expect(cells[0]).toBe('1');
    expect(cells[1]).toMatch(/^[0-9a-f]{64}$/);
    expect(cells[2]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(cells[3]).not.toBe('');
    // Version 2 changes the description; its row shows that change against version 1.
    await page.getByLabel('Content of description (JSON)').fill('{ "en": "Demo wool jacket" }');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toMatch(/^Draft revision 2, saved/);
    await page.getByRole('button', { name: 'Publish the saved draft' }).click();
    await expect.poll(() => page.getByTestId('published').textContent(), soon).toBe('Published version 2.');
    await expect.poll(() => row.count(), soon).toBe(2);
    await row.first().getByText('Changes from version 1').click();
    await expect.poll(() => page.getByTestId('changes-2').locator('li').allTextContents(), soon).toHaveLength(1);
    const change = (await page.getByTestId('changes-2').textContent())!;
    expect(change).toMatch(/^description changed/);
    expect(change).toContain('"Demo-Jacke"');
    expect(change).toContain('"Demo wool jacket"');
    await photograph('passport');
    // The API holds what the screen shows: the section restricted to legitimate interest.
    const latest = (await call('PassportService', 'GetPassport', { product_id: productId }))['latest'] as {
      version: number;
      sha256: string;
      content: Record<string, any>;
    };
    expect(latest.version).toBe(2);
    expect(latest.sha256).toBe((await row.first().locator('td').allTextContents())[1]);
    expect(latest.sha256).not.toBe(cells[1]);
    expect(latest.content['access']).toEqual({ materials: 'legitimate_interest' });
    expect(latest.content['description']).toEqual({ en: 'Demo wool jacket' });
  }, 60_000);

  it("previews the passport as a shopper and as an authority, compares two versions, and edits a lot's passport by its deep link", async () => {
    const productId = /product_id\s+(\S+)/.exec(output)![1]!;
    // The draft as edited, read as a shopper: the materials (legitimate interest only) are left out.
    const preview = page.getByTestId('passport-preview');
    await page.getByLabel('Preview as').selectOption('public');
    await expect.poll(() => preview.locator('section h3').allTextContents(), soon).toEqual(['description']);
    expect(await page.getByTestId('preview-hidden').textContent()).toBe('1 restricted section is not shown to this reader.');
    expect(await preview.locator('section[data-section="description"]').textContent()).toContain('Demo wool jacket');
    await page.getByLabel('Preview as').selectOption('authority');
    await expect.poll(() => preview.locator('section h3').allTextContents(), soon).toEqual(['description', 'materials (legitimate interest only)']);
    expect(await preview.locator('section[data-section="materials"]').textContent()).toContain('Wool');
    expect(await page.getByTestId('preview-hidden').textContent()).toBe('Every section is shown.');
    // Any two versions compared: 2 against 1 changes the description.
    await page.getByLabel('Compare version').selectOption('1');
    await page.getByLabel('with version').selectOption('2');
    await page.getByRole('button', { name: 'Compare', exact: true }).click();
    await expect.poll(() => page.getByTestId('compare-changes').locator('li').count(), soon).toBe(1);
    expect(await page.getByTestId('compare-changes').textContent()).toMatch(/^description changed/);
    await photograph('passport-preview');
    // A lot's passport, opened from the level picker by keyboard; its address is a deep link.
    await page.getByLabel('A lot').check();
    await page.getByLabel('Lot code').fill('L-E2E-1');
    await page.getByLabel('Lot code').press('Enter');
    await expect.poll(() => page.url(), soon).toMatch(/#\/products\/[0-9a-f-]+\/passport\/lot\/L-E2E-1$/);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), soon).toBe('Passport of Demo Product, lot L-E2E-1');
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toBe('No draft yet. Not published.');
    await page.getByLabel('Content of productionDate (JSON)').fill('"2026-11-01"');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toMatch(/^Draft revision 1, saved/);
    await page.getByRole('button', { name: 'Publish the saved draft' }).click();
    await expect.poll(() => page.getByTestId('published').textContent(), soon).toBe('Published version 1.');
    await page.reload();
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toMatch(/Latest version 1, published/);
    await photograph('passport-lot');
    const lot = await call('PassportService', 'GetPassport', { product_id: productId, lot: 'L-E2E-1' });
    expect(lot['latest']).toMatchObject({ version: 1, content: { productionDate: '2026-11-01' } });
    // The model's passport is untouched: still version 2.
    expect((await call('PassportService', 'GetPassport', { product_id: productId }))['latest']).toMatchObject({ version: 2 });
    // A unit's level by its deep link.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/products/${productId}/passport/unit/E2E-SERIAL-1`)}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), soon).toBe('Passport of Demo Product, unit E2E-SERIAL-1');
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toBe('No draft yet. Not published.');
  }, 60_000);

  it("edits the passport's texts one language at a time, adds a language by keyboard, shows the API's error at the text, and the preview follows the language", async () => {
    const productId = /product_id\s+(\S+)/.exec(output)![1]!;
    await page.evaluate(`location.hash = ${JSON.stringify(`#/products/${productId}/passport`)}`);
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toMatch(/^Draft revision 2, saved/);
    const texts = page.getByTestId('language-texts');
    expect(await page.getByLabel('Language of the texts').locator('option').allTextContents()).toEqual(['en']);
    expect(await texts.getByLabel('description (en)').inputValue()).toBe('Demo wool jacket');
    expect(await texts.getByLabel('materials[0].name (en)').inputValue()).toBe('Wool');
    // A tag that is not a language is refused, naming the field; a good one is added from the keyboard and chosen.
    await page.getByLabel('Add a language').fill('German');
    await page.getByLabel('Add a language').press('Enter');
    expect(await texts.getByRole('alert').textContent()).toBe('language: must be a language tag (en, de, fr-CA)');
    expect(await page.getByLabel('Add a language').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Add a language').fill('de');
    await page.getByLabel('Add a language').press('Enter');
    await expect.poll(() => page.getByLabel('Language of the texts').inputValue(), soon).toBe('de');
    expect(await texts.getByLabel('description (de)').inputValue()).toBe('');
    expect(await texts.getByText('en: Demo wool jacket').count()).toBe(1);
    await texts.getByLabel('description (de)').fill('Demo-Wolljacke');
    await texts.getByLabel('materials[0].name (de)').fill(' ');
    // The edit is in the section's JSON, and the preview follows the language chosen.
    expect(JSON.parse(await page.getByLabel('Content of description (JSON)').inputValue())).toEqual({ en: 'Demo wool jacket', de: 'Demo-Wolljacke' });
    expect(await page.getByLabel('Language', { exact: true }).inputValue()).toBe('de');
    await expect
      .poll(() => page.getByTestId('passport-preview').locator('section[data-section="description"]').textContent(), soon)
      .toContain('Demo-Wolljacke');
    // A blank text: the API refuses it by its field, shown at that text; nothing is written.
    await page.getByRole('button', { name: 'Save draft' }).click();
    const material = texts.getByLabel('materials[0].name (de)');
    await expect.poll(() => material.getAttribute('aria-invalid'), soon).toBe('true');
    expect(await texts.getByRole('alert').textContent()).toContain('content.materials[0].name.de: must be a text of 1..300 characters');
    expect(await page.getByTestId('passport-state').textContent()).toMatch(/^Draft revision 2, saved/);
    await material.fill('Wolle');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await expect.poll(() => page.getByTestId('passport-state').textContent(), soon).toMatch(/^Draft revision 3, saved/);
    expect(await material.getAttribute('aria-invalid')).toBe('false');
    await page.getByLabel('Preview as').selectOption('authority');
    await expect.poll(() => page.getByTestId('passport-preview').locator('section[data-section="materials"]').textContent(), soon).toContain('Wolle');
    await photograph('passport-languages');
    // Back to English from the preview's own picker: the texts follow it too.
    await page.getByLabel('Language', { exact: true }).selectOption('en');
    await expect.poll(() => page.getByLabel('Language of the texts').inputValue(), soon).toBe('en');
    expect(await texts.getByLabel('description (en)').inputValue()).toBe('Demo wool jacket');
    expect(await page.getByTestId('passport-preview').locator('section[data-section="description"]').textContent()).toContain('Demo wool jacket');
    const draft = (await call('PassportService', 'GetPassport', { product_id: productId }))['draft'] as { revision: number; content: Record<string, any> };
    expect(draft.revision).toBe(3);
    expect(draft.content['description']).toEqual({ en: 'Demo wool jacket', de: 'Demo-Wolljacke' });
    expect(draft.content['materials']).toEqual([{ name: { en: 'Wool', de: 'Wolle' }, massFraction: 0.4 }]);
  }, 60_000);

  it('creates an API key with scopes, shown once, that works with them; pages the keys and revokes one', async () => {
    const origin = new URL(signInLink).origin;
    const brandId = new URLSearchParams(signInLink.split('#')[1]).get('brand')!;
    const asKey = (key: string, method: string, service = 'MintService') =>
      fetch(`${origin}/mint.v1.${service}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ brand_id: brandId }),
      });
    await go('API keys');
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBeGreaterThan(0);
    // No name and no scope: the API names both fields.
    await page.getByLabel('mint:read').uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.getByRole('alert').locator('li code').allTextContents(), soon).toEqual(['name', 'scopes']);
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // By keyboard: type the name, Space on two scopes, Enter on the button.
    await page.getByLabel('Name', { exact: true }).focus();
    await page.keyboard.type('e2e reader');
    await page.getByLabel('mint:read').focus();
    await page.keyboard.press('Space');
    await page.getByLabel('links:read').focus();
    await page.keyboard.press('Space');
    expect(await page.getByLabel('links:read').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Create key' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('api-key').textContent(), soon).toMatch(/^mk_[0-9a-z]{12}_/);
    apiKeySecret = (await page.getByTestId('api-key').textContent())!;
    const row = page.locator('tbody tr', { hasText: 'e2e reader' });
    await expect.poll(() => row.getByTestId('key-state').textContent(), soon).toBe('active');
    expect(await row.textContent()).toContain('mint:read, links:read');
    expect(await row.textContent()).toContain(apiKeySecret.slice(0, 15));
    expect(await page.locator('table').textContent()).not.toContain(apiKeySecret.slice(16));
    expect((await asKey(apiKeySecret, 'GetMintKpis')).status).toBe(200);
    expect((await asKey(apiKeySecret, 'ListWebhookEndpoints', 'WebhookService')).status).toBe(403);
    // Twenty more keys: the list pages with the API's cursor.
    for (let i = 0; i < 20; i++) await call('WorkspaceService', 'CreateApiKey', { name: `bulk ${i}`, scopes: ['scans:read'] });
    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBe(20);
    await page.getByRole('navigation', { name: 'Keys pages' }).getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: 'e2e reader' }).count(), soon).toBe(1);
    // Revoking asks first; the key is refused at once after.
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await row.getByRole('button', { name: /^Yes, revoke/ }).click();
    await expect.poll(() => row.getByTestId('key-state').textContent(), soon).toMatch(/^revoked \d{4}-/);
    expect((await asKey(apiKeySecret, 'GetMintKpis')).status).toBe(401);
    // The secret is gone from the screen once anything else is done.
    expect(await page.getByTestId('api-key').count()).toBe(0);
    await photograph('api-keys');
  }, 60_000);

  it('issues a passport access credential for a class with an expiry (key shown once), pages the credentials and revokes one', async () => {
    await go('Passport access');
    await expect.poll(() => page.getByText('No credentials yet.').count(), soon).toBe(1);
    // No name and an expiry beyond a year: the API names both fields.
    await page.getByLabel('Expires (end of day, UTC)').fill(new Date(Date.now() + 800 * 86_400_000).toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Issue credential' }).click();
    await expect.poll(() => page.getByRole('alert').locator('li code').allTextContents(), soon).toEqual(['name', 'expires_at']);
    expect(await page.getByLabel('Issued to').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Expires (end of day, UTC)').getAttribute('aria-invalid')).toBe('true');
    // By keyboard: the name, the class, a date within the year, Enter.
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Issued to').fill('Market surveillance NL');
    await page.getByLabel('Reads').selectOption({ label: 'authority (market surveillance, customs)' });
    await page.getByLabel('Expires (end of day, UTC)').fill(expires);
    await page.getByLabel('Issued to').press('Enter');
    await expect.poll(() => page.getByTestId('passport-key').textContent(), soon).toMatch(/^pp_/);
    passportKeySecret = (await page.getByTestId('passport-key').textContent())!;
    const row = page.locator('tbody tr', { hasText: 'Market surveillance NL' });
    await expect.poll(() => row.getByTestId('credential-state').textContent(), soon).toBe('active');
    expect(await row.textContent()).toContain('authority');
    expect(await row.textContent()).toContain(`${expires} 23:59:59`);
    expect(await page.getByTestId('passport-credentials').textContent()).not.toContain(passportKeySecret.slice(3));
    const listed = await call('PassportService', 'ListPassportAccessKeys', {});
    expect(listed['credentials']).toHaveLength(1);
    expect(listed['credentials'][0]).toMatchObject({ name: 'Market surveillance NL', access_class: 'PASSPORT_ACCESS_CLASS_AUTHORITY' });
    expect(JSON.stringify(listed)).not.toContain(passportKeySecret.slice(3));
    // Twenty more: the list shows 20 a page.
    for (let i = 0; i < 20; i++) {
      await call('PassportService', 'IssuePassportAccessKey', {
        name: `repairer ${i}`,
        access_class: 'PASSPORT_ACCESS_CLASS_LEGITIMATE_INTEREST',
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      });
    }
    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBe(20);
    expect(await page.getByTestId('passport-key').count()).toBe(0);
    await page.getByRole('navigation', { name: 'Credentials pages' }).getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBe(1);
    // Revoking asks first.
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await row.getByRole('button', { name: /^Yes, revoke/ }).click();
    await expect.poll(() => row.getByTestId('credential-state').textContent(), soon).toMatch(/^revoked \d{4}-/);
    const revoked = (await call('PassportService', 'ListPassportAccessKeys', {}))['credentials'].find(
      (c: { name: string }) => c.name === 'Market surveillance NL',
    );
    expect(revoked['revoked_at']).toMatch(/^\d{4}-/);
    await photograph('passport-access');
  }, 90_000);

  it("sets the passport page's logo and colour, shows the API's errors at their fields, and previews the header", async () => {
    await go('Passport style');
    await page.getByLabel('Logo URL (https)').fill('http://brand.example/logo.png');
    await page.getByLabel('Colour (#rrggbb)').fill('blue');
    await page.getByRole('button', { name: 'Save style' }).click();
    await expect
      .poll(() => page.locator('[data-field="logo_url"]').textContent(), soon)
      .toBe('logo_url: must be an absolute https URL of at most 2000 ASCII characters');
    expect(await page.locator('[data-field="colour"]').textContent()).toBe('colour: must be a colour as #rrggbb');
    expect(await page.getByLabel('Logo URL (https)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Colour (#rrggbb)').getAttribute('aria-invalid')).toBe('true');
    // By keyboard: both fixed, Enter in the colour field.
    await page.getByLabel('Logo URL (https)').fill('https://brand.example/logo.png');
    await page.getByLabel('Colour (#rrggbb)').fill('#0B5CAD');
    expect(await page.getByTestId('style-preview').locator('[data-colour]').getAttribute('data-colour')).toBe('#0B5CAD');
    expect(await page.getByTestId('style-preview').textContent()).toContain('Demo Brand');
    await page.getByLabel('Colour (#rrggbb)').press('Enter');
    await expect.poll(() => page.getByTestId('style-saved').textContent(), soon).toBe('Style saved: logo https://brand.example/logo.png, colour #0b5cad.');
    expect(await page.locator('[data-field]').count()).toBe(0);
    // Its deep link opens it again, starting from the style set.
    await page.reload();
    await expect.poll(() => page.getByLabel('Colour (#rrggbb)').inputValue(), soon).toBe('#0b5cad');
    expect(page.url()).toMatch(/#\/passport-style$/);
    expect(await page.getByLabel('Logo URL (https)').inputValue()).toBe('https://brand.example/logo.png');
    await photograph('passport-style');
  }, 60_000);

  it('adds a member by e-mail address, changes a role, refuses to demote the last owner in its words, and removes the member', async () => {
    await go('Members');
    const owner = page.locator('tbody tr', { has: page.getByTestId('member-role').filter({ hasText: 'owner' }) });
    await expect.poll(() => owner.count(), soon).toBe(1);
    // A malformed address: the API names the field, which is marked invalid.
    await page.getByLabel('E-mail address').fill('not an address');
    await page.getByLabel('E-mail address').press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toBe('email: must be an e-mail address (name@example.com)');
    expect(await page.getByLabel('E-mail address').getAttribute('aria-invalid')).toBe('true');
    // By keyboard: the address, Tab to the name, Tab to the role, Enter.
    await page.getByLabel('E-mail address').fill('');
    await page.getByLabel('E-mail address').focus();
    await page.keyboard.type('ops@e2e.example');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Ops Lead');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    expect(await page.getByLabel('Role', { exact: true }).inputValue()).toBe('admin');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('member-done').textContent(), soon).toMatch(/^ops@e2e\.example added as admin \(a new user, id [0-9a-f-]{36}/);
    const ops = page.locator('tbody tr', { hasText: 'ops@e2e.example' });
    await expect.poll(() => ops.getByTestId('member-role').textContent(), soon).toBe('admin');
    // The last owner keeps the role: the API's words.
    await owner.getByRole('combobox').selectOption('viewer');
    await owner.getByRole('button', { name: /^Save role/ }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toBe("the brand's last owner cannot become viewer: make another member owner first");
    expect(await owner.getByTestId('member-role').textContent()).toBe('owner');
    await ops.getByRole('combobox').selectOption('member');
    await ops.getByRole('button', { name: /^Save role/ }).click();
    await expect.poll(() => ops.getByTestId('member-role').textContent(), soon).toBe('member');
    await photograph('members');
    const listed = await call('WorkspaceService', 'ListBrandMembers', {});
    expect(listed['members'].map((m: { email: string; role: string }) => [m.email, m.role])).toContainEqual(['ops@e2e.example', 'member']);
    await ops.getByRole('button', { name: /^Remove/ }).click();
    await ops.getByRole('button', { name: /^Yes, remove/ }).click();
    await expect.poll(() => page.getByTestId('member-done').textContent(), soon).toBe('ops@e2e.example removed from the brand.');
    await expect.poll(() => page.locator('tbody tr', { hasText: 'ops@e2e.example' }).count(), soon).toBe(0);
    // Its address opens it again on a fresh load.
    expect(page.url()).toMatch(/#\/members$/);
    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBe(1);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Members');
  }, 60_000);

  it('signs in with OpenID Connect (authorization code with PKCE), renews the session silently and signs out at the provider', async () => {
    const session = async () =>
      JSON.parse((await page.evaluate<string | null>('sessionStorage.getItem("mint.console.session")')) ?? 'null') as { token: string } | null;
    const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as { iss: string; sub: string };
    const userId = (JSON.parse(await readFile(join(dataDir, 'demo.json'), 'utf8')) as { user_id: string }).user_id;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: `Sign in with ${new URL(provider.issuer).host}` }).click();
    // The provider's own sign-in and consent pages.
    await expect.poll(() => page.url(), soon).toContain(provider.issuer);
    await page.locator('input[name="login"]').fill(userId);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click();
    await expect.poll(() => page.getByLabel('Brand workspace').locator('option').allTextContents(), soon).toEqual(['Demo Brand (owner)']);
    expect(page.url()).not.toContain('code=');
    await page.getByRole('button', { name: 'Open the console' }).click();
    await expect.poll(() => kpi('Tokens minted'), soon).toMatch(/^\d/);
    const first = (await session())!.token;
    expect(claims(first)).toMatchObject({ iss: provider.issuer, sub: userId });
    expect(provider.grants).toEqual(['authorization_code']);
    // The 20-second access token is renewed before it expires, with no page leaving the console.
    await expect.poll(() => provider.grants, { timeout: 30_000, interval: 500 }).toContain('refresh_token');
    await expect.poll(async () => (await session())!.token, soon).not.toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await go('Batches');
    await expect.poll(() => page.locator('tbody tr').count(), soon).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    // Sign-out ends the provider's session too, and comes back signed out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.url(), soon).toContain(provider.issuer);
    await page.locator('button[type="submit"]').first().click();
    await expect.poll(() => page.getByRole('button', { name: `Sign in with ${new URL(provider.issuer).host}` }).count(), soon).toBe(1);
    expect(await session()).toBeNull();
    await photograph('sign-in-oidc');
  }, 120_000);

  it('keeps the token out of the server log: only the banner printed it; the API key and the passport access key the console made are in no line at all', async () => {
    const afterBanner = output.slice(output.indexOf(signInLink) + signInLink.length);
    const banner = afterBanner.indexOf(`export TOKEN=${token}`);
    expect(afterBanner.replace(`export TOKEN=${token}`, '')).not.toContain(token);
    expect(banner).toBeGreaterThanOrEqual(0);
    expect(apiKeySecret).toMatch(/^mk_/);
    expect(output).not.toContain(apiKeySecret);
    expect(output).not.toContain(apiKeySecret.slice(16, 48));
    expect(passportKeySecret).toMatch(/^pp_/);
    expect(output).not.toContain(passportKeySecret);
    expect(output).not.toContain(passportKeySecret.slice(16, 48));
  });
});
