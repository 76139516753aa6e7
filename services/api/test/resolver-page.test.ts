// The page a phone gets when it scans a label: a serial the brand never issued gets its own 404
// page (never its product's), a unit without a passport page of the brand's the identity page,
// the refusals theirs; each in English, German or French by Accept-Language, small, without
// script, and without a serious or critical accessibility violation in a real browser at 320 px;
// a unit a scan rule marked suspect carries a caution band.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { createLogger } from '@mint/runtime';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, run, setPassportUrl } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startApi, type RunningApi } from '../src/start.ts';

let app: UseCaseBundle;
let api: RunningApi;
let base: string;
let brand: SeededBrand;
let slug: string;
let serial: string;
let inactive: string;
let suspect: string;
const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 2);
  const manual = await mintCompleted(app.ctx, brand, 1, { activationMode: 'first_scan' });
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  [{ serial }, { serial: suspect }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [
    mintBatchId,
  ])) as [{ serial: string }, { serial: string }];
  // As a clone alert leaves it (services/api/test/scan-alerts.test.ts raises one for real).
  await query(app.db.em.fork(), `update mint_units set suspect_rule = 'clone', suspect_since = '2026-04-02T10:00:00Z' where brand_id = ? and serial = ?`, [
    brand.brandId,
    suspect,
  ]);
  [{ serial: inactive }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ?', [
    manual.mintBatchId,
  ])) as [{ serial: string }];
  api = await startApi({
    ctx: app.ctx,
    config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
    logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
    readiness: async () => ({ ok: true, checks: {} }),
  });
  base = `http://127.0.0.1:${api.port}`;
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

async function page(path: string, language?: string) {
  const response = await fetch(`${base}${path}`, {
    headers: { accept: browserAccept, ...(language === undefined ? {} : { 'accept-language': language }) },
    redirect: 'manual',
  });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}
const unitPath = (s: string) => `/r/${slug}/01/${brand.gtin}/21/${s}`;

describe('the identity page', () => {
  it('tells a shopper a serial the brand never issued is not its item: 404, its own page, in their language', async () => {
    const cases: [string | undefined, string, string][] = [
      [undefined, 'en', 'Not issued by this brand'],
      ['de-DE,de;q=0.9,en;q=0.5', 'de', 'Nicht von dieser Marke ausgegeben'],
      ['fr-CH, fr;q=0.9', 'fr', 'Non émis par cette marque'],
      ['ja, ko;q=0.8', 'en', 'Not issued by this brand'],
    ];
    for (const [language, lang, words] of cases) {
      const answer = await page(unitPath('NEVERISSUED1'), language);
      expect([answer.status, answer.type], language).toEqual([404, 'text/html; charset=utf-8']);
      expect(answer.body, language).toContain(`<html lang="${lang}">`);
      expect(answer.body, language).toContain(words);
      expect(answer.body, language).toContain('NEVERISSUED1');
      expect(answer.body, language).not.toContain('<a ');
    }
  });

  it('shows a unit the brand issued as genuine, with its brand, product, GTIN and serial, in a small page without script', async () => {
    const answer = await page(unitPath(serial), 'de');
    expect([answer.status, answer.type]).toEqual([200, 'text/html; charset=utf-8']);
    const [{ name }] = (await query<{ name: string }>(app.db.em.fork(), 'select name from brands where id = ?', [brand.brandId])) as [{ name: string }];
    for (const shown of ['Echt', name, 'Product One', brand.gtin, serial, 'Seriennummer']) expect(answer.body).toContain(shown);
    expect(answer.body).not.toMatch(/<script/i);
    expect(Buffer.byteLength(answer.body)).toBeLessThan(50 * 1024);
  });

  it('shows a caution band on a unit reported for checking, in the asked language, and none on a unit that is not', async () => {
    const cases: [string, string][] = [
      ['en', 'Reported for checking'],
      ['de', 'Zur Prüfung gemeldet'],
      ['fr', 'Signalé pour vérification'],
    ];
    for (const [language, words] of cases) {
      const answer = await page(unitPath(suspect), language);
      expect(answer.status, language).toBe(200);
      expect(answer.body, language).toContain(words);
      expect(answer.body, language).toContain('2026-04-02');
      expect(answer.body, language).toContain('class="caution" role="note"');
    }
    expect((await page(unitPath(serial), 'en')).body).not.toContain('Reported for checking');
  });

  it('answers the refusals with their own words in the asked language, the same bytes for every unknown identity', async () => {
    const waiting = await page(unitPath(inactive), 'fr');
    expect([waiting.status, waiting.body.includes('Pas encore activé')]).toEqual([409, true]);
    const [a, b] = [await page(`/r/${slug}/01/09506000134352/21/X`, 'de'), await page(`/r/nosuchbrand/01/${brand.gtin}/21/${serial}`, 'de')];
    expect([a.status, b.status, a.body === b.body, a.body.includes('Nicht gefunden')]).toEqual([404, 404, true, true]);
  });
});

describe('a unit reported for checking', () => {
  it("shows a shopper's plain scan the caution with the passport as an action instead of redirecting past it; a link type asked for by name is followed", async () => {
    const other = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, other, 2);
    const passport = 'https://passports.example/checked';
    await setPassportUrl(app.db.em.fork(), other.brandId, passport);
    const [{ slug: otherSlug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId])) as [
      { slug: string },
    ];
    const [marked, clean] = (
      await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])
    ).map((r) => r.serial);
    await run(app.db.em.fork(), "update mint_units set suspect_rule = 'clone', suspect_since = now() where brand_id = ? and serial = ?", [
      other.brandId,
      marked,
    ]);
    const path = (s: string) => `/r/${otherSlug}/01/${other.gtin}/21/${s}`;
    const answer = await page(path(marked!));
    expect([answer.status, answer.body.includes('Reported for checking'), answer.body.includes(`<a href="${passport}">`)]).toEqual([200, true, true]);
    const byName = await fetch(`${base}${path(marked!)}?linkType=gs1:pip`, { headers: { accept: browserAccept }, redirect: 'manual' });
    expect([byName.status, byName.headers.get('location')]).toEqual([307, passport]);
    const plain = await fetch(`${base}${path(clean!)}`, { headers: { accept: browserAccept }, redirect: 'manual' });
    expect([plain.status, plain.headers.get('location')]).toEqual([307, passport]);
  });
});

describe('in a real browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
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
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('has no serious or critical axe-core violation and no sideways scrolling at 320 px, on every kind of page', async () => {
    const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const context = await browser.newContext({ viewport: { width: 320, height: 640 } });
    try {
      for (const path of [unitPath(serial), unitPath(suspect), unitPath('NEVERISSUED1'), unitPath(inactive), `/r/${slug}/01/09506000134352`]) {
        const tab = await context.newPage();
        await tab.goto(`${base}${path}`);
        await tab.addScriptTag({ content: axe });
        const { violations, passes } = await tab.evaluate(async () => {
          const result = await (
            globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null }[]; passes: unknown[] }> } }
          ).axe.run();
          return { violations: result.violations.map((v) => `${v.impact} ${v.id}`), passes: result.passes.length };
        });
        // axe ran its rules (colour contrast, landmarks, language, names of links...) on the page.
        expect(passes, path).toBeGreaterThan(5);
        expect(
          violations.filter((v) => v.startsWith('serious') || v.startsWith('critical')),
          path,
        ).toEqual([]);
        const overflow = (await tab.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
        expect(overflow, path).toBeLessThanOrEqual(0);
        await tab.close();
      }
    } finally {
      await context.close();
    }
  }, 90_000);
});
