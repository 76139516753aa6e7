// The one URL rule of stored links end to end: a passport_url or a link href with non-ASCII
// characters is stored in its ASCII form whichever way it arrives (UpsertProduct, the product CSV
// import, the link management), so a browser scan redirects with a valid Location; a stored value
// that could not be a header value answers a clear 502 instead of failing the request.

import { getProductImport, runProductImport, startProductImport, upsertLink, upsertProduct } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, setPassportUrl } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let baseUrl: string;

const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const nonAscii = 'https://Bücher.example/€-euro?q=ü#teil-ä';
const ascii = 'https://xn--bcher-kva.example/%E2%82%AC-euro?q=%C3%BC#teil-%C3%A4';

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app, { readiness: async () => ({ ok: true, checks: {} }) });
  baseUrl = api.baseUrl;
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

async function slugOf(brand: SeededBrand): Promise<string> {
  const [row] = await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId]);
  return row!.slug;
}

/** A browser scan of the brand's product's GTIN. */
async function scan(brand: SeededBrand): Promise<{ status: number; location: string | null; body: string }> {
  const response = await fetch(`${baseUrl}/r/${await slugOf(brand)}/01/${brand.gtin}`, { headers: browser, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), body: await response.text() };
}

async function storedPassportUrl(brand: SeededBrand): Promise<string | null> {
  const [row] = await query<{ passport_url: string | null }>(app.db.em.fork(), 'select passport_url from products where id = ?', [brand.productId]);
  return row!.passport_url;
}

describe('one URL rule for every stored link', () => {
  it('UpsertProduct stores a non-ASCII passport_url in its ASCII form and a scan redirects to it', async () => {
    const brand = await app.seedBrand();
    const { product } = await upsertProduct(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        sku: 'SKU-1',
        name: 'Product One',
        gtin: brand.gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: nonAscii,
      },
    );
    expect(product.passportUrl).toBe(ascii);
    expect(await storedPassportUrl(brand)).toBe(ascii);
    expect(await scan(brand)).toMatchObject({ status: 307, location: ascii });
  });

  it('the product CSV import stores a non-ASCII passport_url in its ASCII form and a scan redirects to it', async () => {
    const brand = await app.seedBrand();
    const csv = `sku,name,gtin,commercial_status,mint_readiness_status,passport_url\nSKU-1,Product One,${brand.gtin},ACTIVE,READY,https://example.com/€-euro\n`;
    const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, new TextEncoder().encode(csv));
    await runProductImport(app.ctx, brand.brandId, started.id);
    const done = await getProductImport(app.ctx, brand.brandId, started.id);
    expect(done).toMatchObject({ status: 'COMPLETED', importedRows: 1, failedRows: 0 });
    expect(await storedPassportUrl(brand)).toBe('https://example.com/%E2%82%AC-euro');
    expect(await scan(brand)).toMatchObject({ status: 307, location: 'https://example.com/%E2%82%AC-euro' });
  });

  it('UpsertProduct and the import refuse the same URLs with the same message', async () => {
    const brand = await app.seedBrand();
    for (const bad of ['http://example.com/page', 'https://exa mple.com/', 'ftp://example.com/', '/relative', `https://example.com/${'a'.repeat(2_000)}`]) {
      await expect(
        upsertProduct(
          app.ctx,
          { id: brand.userId },
          {
            brandId: brand.brandId,
            sku: 'SKU-X',
            name: 'X',
            gtin: null,
            commercialStatus: 'ACTIVE',
            mintReadinessStatus: 'READY',
            passportUrl: bad,
          },
        ),
      ).rejects.toMatchObject({ violations: [{ field: 'passport_url', message: 'must be an https URL of at most 2000 characters' }] });
      const csv = `sku,name,commercial_status,mint_readiness_status,passport_url\nSKU-X,X,ACTIVE,READY,"${bad}"\n`;
      const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, new TextEncoder().encode(csv));
      await runProductImport(app.ctx, brand.brandId, started.id);
      const done = await getProductImport(app.ctx, brand.brandId, started.id);
      expect(done.errors).toEqual([{ row: 1, field: 'passport_url', message: 'must be an https URL of at most 2000 characters' }]);
    }
  });

  it('a link href with non-ASCII characters is stored in its ASCII form and a scan redirects to it', async () => {
    const brand = await app.seedBrand();
    const { link } = await upsertLink(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        gtin: brand.gtin,
        lot: null,
        serial: null,
        linkType: 'gs1:pip',
        href: nonAscii,
        title: 'Passport',
        hreflang: [],
        mediaType: null,
        context: [],
        fwqs: false,
        isDefault: true,
      },
    );
    expect(link.href).toBe(ascii);
    expect(await scan(brand)).toMatchObject({ status: 307, location: ascii });
  });

  it('a stored target that cannot be a header value answers 502 with a clear body, and the server keeps serving', async () => {
    const brand = await app.seedBrand();
    await mintCompleted(app.ctx, brand, 1);
    // Written before the rule existed: bypasses the use cases.
    await setPassportUrl(app.db.em.fork(), brand.brandId, 'https://example.com/€-euro', brand.productId);
    const answer = await scan(brand);
    expect(answer.status).toBe(502);
    expect(answer.location).toBeNull();
    expect(answer.body).toMatch(/not a valid URL/);
    const healthy = await fetch(`${baseUrl}/healthz`);
    expect(healthy.status).toBe(200);
  });
});
