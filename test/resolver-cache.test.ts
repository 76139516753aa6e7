// The resolver behind a real caching proxy: Debian's Varnish, started by this file on a free
// loopback port with a temporary working folder and the project's VCL (deploy/varnish/resolver.vcl),
// in front of an API whose CACHE_PURGE_URL is that Varnish. varnishncsa reads Varnish's log of cache
// hits into `mintctl scans ship-log`, as an operator runs them. Checked: GTIN and lot answers are
// served from the cache; a link change, a product rename, a passport publish and a lot void are
// each visible through the cache within 2 s (the API purges by surrogate key on the link change
// feed); and the scans counted in the ledger are the same with and without the cache.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { publishPassport, setBrandResolverDomain, setMintBatchStatus, updatePassportDraft, upsertLink, upsertProduct } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../services/api/test/support.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
import { freePort } from './support/ports.ts';
import { query } from './support/sql.ts';
import { nextGtin, setupUseCases, testJwtSecret, testWebhookSecretKeys, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

const vclTemplate = fileURLToPath(new URL('../deploy/varnish/resolver.vcl', import.meta.url));
const varnishd = '/usr/sbin/varnishd';
const varnishncsa = '/usr/bin/varnishncsa';

let app: UseCaseBundle;
let brand: SeededBrand;
let slug: string;
let serials: string[];
let api: TestApi;
let dir: string;
let varnishPort: number;
let varnish: ChildProcess;
let ncsa: ChildProcess;
let shipper: ChildProcess;
const shipperOutput: string[] = [];
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];

/** The brand's GTIN link, its href as given. */
const gtinLink = (href: string) => ({
  brandId: brand.brandId,
  gtin: brand.gtin,
  lot: null,
  serial: null,
  linkType: 'gs1:pip',
  title: 'Passport',
  hreflang: [],
  mediaType: null,
  context: [],
  fwqs: null,
  isDefault: true,
  href,
});

let phones = 0;
/** A GET as a phone of its own makes it (X-Forwarded-For), at `base`: status, Location, whether the cache answered. */
async function scan(base: string, path: string, accept?: string): Promise<{ status: number; location: string | null; hit: boolean }> {
  const phone = phones++;
  const headers: Record<string, string> = { 'x-forwarded-for': `10.9.${(phone >> 8) & 255}.${phone & 255}`, 'user-agent': 'Mozilla/5.0 (Android) Camera' };
  if (accept !== undefined) headers['accept'] = accept;
  const response = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
  await response.arrayBuffer();
  // Varnish's X-Varnish holds two ids on a hit (this request's and the cached object's).
  const hit = (response.headers.get('x-varnish') ?? '').trim().split(/\s+/).length === 2;
  return { status: response.status, location: response.headers.get('location'), hit };
}

/** Scans of the brand in the ledger, summed over the rows: all, or those of one source (`ingest`: the shipped hits). */
const ledger = async (source?: string) =>
  Number(
    (
      await query<{ n: string }>(
        app.db.em.fork(),
        `select coalesce(sum(scans), 0)::text as n from scan_events where brand_id = ?${source === undefined ? '' : ' and source = ?'}`,
        source === undefined ? [brand.brandId] : [brand.brandId, source],
      )
    )[0]!.n,
  );

/** Waits until `check` holds, every 50 ms, at most `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

beforeAll(async () => {
  if (!existsSync(varnishd)) throw new Error('varnishd is missing: apt-get install -y --no-install-recommends varnish (.ci/run installs it)');
  app = await setupUseCases();
  brand = await app.seedBrand();
  slug = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId]))[0]!.slug;
  await upsertLink(app.ctx, { id: brand.userId }, gtinLink('https://acme.example/first'));
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 20);
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );

  varnishPort = await freePort();
  api = await startTestApi(app, { config: { cachePurgeUrl: `http://127.0.0.1:${varnishPort}/`, trustedProxies: ['127.0.0.1'] } });
  dir = await mkdtemp(join(tmpdir(), 'mint-varnish-'));
  // varnishd's worker runs as its own user: it must reach the folder.
  await chmod(dir, 0o755);
  const vcl = join(dir, 'resolver.vcl');
  await writeFile(vcl, (await readFile(vclTemplate, 'utf8')).replace('"BACKEND_HOST"', '"127.0.0.1"').replace('"BACKEND_PORT"', `"${api.port}"`));
  const workdir = join(dir, 'work');
  varnish = spawn(
    varnishd,
    ['-F', '-n', workdir, '-a', `127.0.0.1:${varnishPort}`, '-f', vcl, '-s', 'malloc,32m', '-T', 'none', '-p', 'ban_lurker_sleep=0.1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(varnish);
  const output: string[] = [];
  varnish.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
  varnish.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  await until(
    `varnishd on ${varnishPort}`,
    async () =>
      fetch(`http://127.0.0.1:${varnishPort}/.well-known/gs1resolver`).then(
        (r) => r.ok,
        () => false,
      ),
    20_000,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}:\n${output.join('')}`);
  });
  // The hits' scans: `varnishncsa ... | mintctl scans ship-log`.
  ncsa = spawn(varnishncsa, ['-n', workdir, '-q', 'VCL_Log:scan', '-F', '%{Varnish:vxid}x %{%s}t %{VCL_Log:scan}x'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(ncsa);
  shipper = spawn(process.execPath, ['services/cli/src/main.ts', 'scans', 'ship-log'], {
    cwd: repoRoot,
    // The sealing keys of the test's use cases (test/support/usecases.ts): the shipper opens the
    // brand's serial key with them to find a scanned serial's unit.
    env: {
      PATH: process.env['PATH'] ?? '',
      DATABASE_URL: app.database.url,
      AUTH_JWT_SECRET: testJwtSecret,
      WEBHOOK_SECRET_KEYS: testWebhookSecretKeys,
      LOG_LEVEL: 'warn',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  shipper.stdout!.on('data', (c: Buffer) => shipperOutput.push(c.toString()));
  shipper.stderr!.on('data', (c: Buffer) => shipperOutput.push(c.toString()));
  ncsa.stdout!.pipe(shipper.stdin!);
  await sleep(500);
}, 60_000);

afterAll(async () => {
  // varnishncsa first: its end closes the shipper's input, and the shipper ships what it holds and exits.
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), sleep(5_000)]);
    }
  }
  if (shipper !== undefined && shipper.exitCode === null) await Promise.race([once(shipper, 'exit'), sleep(10_000)]);
  shipper?.kill('SIGKILL');
  await api?.close();
  await app?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the resolver behind Varnish', () => {
  it('serves GTIN answers from the cache, and shows a link change through it within 2 s', async () => {
    const cache = `http://127.0.0.1:${varnishPort}`;
    const path = `/r/${slug}/01/${brand.gtin}`;
    expect(await scan(cache, path)).toMatchObject({ status: 307, location: 'https://acme.example/first' });
    expect(await scan(cache, path)).toEqual({ status: 307, location: 'https://acme.example/first', hit: true });
    // A unit's answer is never kept.
    await scan(cache, `${path}/21/${serials[0]}`);
    expect((await scan(cache, `${path}/21/${serials[0]}`)).hit).toBe(false);

    const times: number[] = [];
    for (const [n, href] of ['https://acme.example/second', 'https://acme.example/third', 'https://acme.example/fourth'].entries()) {
      await upsertLink(app.ctx, { id: brand.userId }, gtinLink(href));
      const changedAt = Date.now();
      let seen: { location: string | null } = { location: null };
      while (Date.now() - changedAt < 5_000 && seen.location !== href) {
        seen = await scan(cache, path);
        if (seen.location !== href) await sleep(20);
      }
      times.push(Date.now() - changedAt);
      expect(seen.location, `change ${n + 1}`).toBe(href);
      // Cached again under the new link.
      expect(await scan(cache, path)).toEqual({ status: 307, location: href, hit: true });
    }
    console.log(`link change visible through Varnish after ${times.join(', ')} ms`);
    for (const ms of times) expect(ms).toBeLessThan(2_000);

    // A brand domain change purges every cached answer of the brand (its anchors name the domain).
    const lot = `${path}/10/LOT-Z?linkType=linkset`;
    await scan(cache, lot);
    expect((await scan(cache, lot)).hit).toBe(true);
    await setBrandResolverDomain(app.ctx, { id: brand.userId }, { brandId: brand.brandId, domain: 'id.cache-test.example' });
    const changedAt = Date.now();
    let again = true;
    while (again && Date.now() - changedAt < 5_000) {
      again = (await scan(cache, lot)).hit;
      if (again) await sleep(20);
    }
    console.log(`brand domain change purged the brand's cached answers after ${Date.now() - changedAt} ms`);
    expect(again).toBe(false);
    expect(Date.now() - changedAt).toBeLessThan(2_000);
  });

  it('shows a product rename, a passport publish and a voided lot through the cache within 2 s', async () => {
    const cache = `http://127.0.0.1:${varnishPort}`;
    const gtinPath = `/r/${slug}/01/${brand.gtin}`;
    /** The JSON answer through the cache: its status, the product's name, whether the cache answered. */
    const read = async (path: string) => {
      const response = await fetch(`${cache}${path}`, {
        headers: { accept: 'application/json', 'x-forwarded-for': `10.8.0.${phones++ & 255}` },
        redirect: 'manual',
      });
      const body = (await response.json()) as { product?: { name?: string } };
      return {
        status: response.status,
        name: body.product?.name ?? null,
        body,
        hit: (response.headers.get('x-varnish') ?? '').trim().split(/\s+/).length === 2,
      };
    };
    /** Reads `path` through the cache until `done` holds (5 s at most): the time it took. */
    const visibleAfter = async (path: string, done: (answer: Awaited<ReturnType<typeof read>>) => boolean) => {
      const changedAt = Date.now();
      let answer = await read(path);
      while (!done(answer) && Date.now() - changedAt < 5_000) {
        await sleep(20);
        answer = await read(path);
      }
      expect(done(answer), JSON.stringify(answer.body)).toBe(true);
      return Date.now() - changedAt;
    };

    // A rename: the GTIN's cached answers name the product.
    await read(gtinPath);
    expect(await read(gtinPath)).toMatchObject({ name: 'Product One', hit: true });
    const renames: number[] = [];
    for (const name of ['Product One, renamed', 'Product One, renamed again']) {
      await upsertProduct(
        app.ctx,
        { id: brand.userId },
        {
          brandId: brand.brandId,
          sku: 'SKU-1',
          name,
          gtin: brand.gtin,
          commercialStatus: 'ACTIVE',
          mintReadinessStatus: 'READY',
          passportUrl: null,
        },
      );
      renames.push(await visibleAfter(gtinPath, (a) => a.name === name));
      // Cached again under the new name.
      expect(await read(gtinPath)).toMatchObject({ name, hit: true });
    }

    // A void: the lot's cached answer gives way to the voided lot's.
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 5, { identityMode: 'batch', lots: [{ lotCode: 'LOT-VOID', qty: 5 }] });
    const lotPath = `${gtinPath}/10/LOT-VOID`;
    await read(lotPath);
    expect(await read(lotPath)).toMatchObject({ status: 200, hit: true });
    await setMintBatchStatus(app.ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId, status: 'voided', reason: 'labels misprinted' });
    // Withdrawn: 410 Gone.
    const voided = await visibleAfter(lotPath, (a) => a.status === 410);
    // A passport publish (of another product: the brand's first stays without one, so its answers
    // stay cacheable): the GTIN's cached answer (no passport) gives way to one with the passport
    // (private: no shared cache keeps it).
    const owner = { id: brand.userId };
    const gtin2 = nextGtin();
    const { product: second } = await upsertProduct(app.ctx, owner, {
      brandId: brand.brandId,
      sku: 'SKU-2',
      name: 'Product Two',
      gtin: gtin2,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl: null,
    });
    await upsertLink(app.ctx, owner, { ...gtinLink('https://acme.example/two'), gtin: gtin2 });
    const secondPath = `/r/${slug}/01/${gtin2}`;
    await read(secondPath);
    expect(await read(secondPath)).toMatchObject({ name: 'Product Two', hit: true });
    await updatePassportDraft(app.ctx, owner, {
      brandId: brand.brandId,
      productId: second.id,
      lot: null,
      serial: null,
      content: { description: { en: 'Traction battery 300 Ah' } },
      expectedRevision: null,
    });
    await publishPassport(app.ctx, owner, { brandId: brand.brandId, productId: second.id, lot: null, serial: null });
    const publish = await visibleAfter(secondPath, (a) => (a.body as { passport?: { version?: number } }).passport?.version === 1);
    console.log(
      `product rename visible through Varnish after ${renames.join(', ')} ms; passport publish after ${publish} ms; lot void (200 -> 410) after ${voided} ms`,
    );
    for (const ms of [...renames, publish, voided]) expect(ms).toBeLessThan(2_000);
  });

  it('counts the same scans with and without the cache', async () => {
    const gtin = `/r/${slug}/01/${brand.gtin}`;
    // A day of scans in small: GTIN redirects, linksets and JSON, lots, units and a never-issued serial.
    const mix: [string, string | undefined][] = [];
    for (let i = 0; i < 60; i++) {
      mix.push(
        [gtin, undefined],
        [`${gtin}?linkType=linkset`, undefined],
        [gtin, 'application/json'],
        [`${gtin}/10/LOT-${i % 3}`, undefined],
        [`${gtin}/21/${serials[i % serials.length]}`, undefined],
      );
      if (i % 10 === 0) mix.push([`${gtin}/21/NEVER${i}`, undefined]);
    }
    const direct = api.baseUrl;
    const cache = `http://127.0.0.1:${varnishPort}`;
    const counts: Record<string, number> = {};
    let hits = 0;
    for (const [name, base] of [
      ['direct', direct],
      ['through the cache', cache],
    ] as const) {
      // Scans made before (the other test's) are written first: the ledger holds still for 3 s (the
      // shipper writes every second, the resolver's recorder every 250 ms).
      let before = await ledger();
      for (let settled = false; !settled; ) {
        await sleep(3_000);
        const now = await ledger();
        settled = now === before;
        before = now;
      }
      const shippedBefore = await ledger('ingest');
      for (let i = 0; i < mix.length; i += 20) {
        const answers = await Promise.all(mix.slice(i, i + 20).map(([path, accept]) => scan(base, path, accept)));
        if (base === cache) hits += answers.filter((a) => a.hit).length;
      }
      await until(`${mix.length} scans ${name} in the ledger`, async () => (await ledger()) - before >= mix.length, 20_000);
      await sleep(1_500);
      counts[name] = (await ledger()) - before;
      if (base === cache) expect((await ledger('ingest')) - shippedBefore, shipperOutput.join('')).toBe(hits);
    }
    console.log(
      `scans sent ${mix.length} a side; counted direct ${counts['direct']}, through the cache ${counts['through the cache']} (${hits} answered by the cache)`,
    );
    expect(counts['direct']).toBe(mix.length);
    expect(counts['through the cache']).toBe(mix.length);
    expect(hits).toBeGreaterThan(mix.length / 2);
    expect(shipperOutput.join('')).not.toMatch(/not a cache hit/);
  });
});
