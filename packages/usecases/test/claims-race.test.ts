// Claims race-safe without row locks across brands: candidates are read without a lock and each is
// taken by a compare-and-set on its (brand_id, id), so concurrent claimers never both win one row.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '@mint/db';
import { claimPayloadPack, claimWebhooks, createWebhookEndpoint, drainWebhookFanout, relayOutbox, type OutboxJob } from '@mint/usecases';
import { query, run } from '../../../test/support/sql.ts';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, submitSerial, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(async () => {
  await app?.close();
});

describe('concurrent claims', () => {
  it('give each pending pack to exactly one of many concurrent workers, across brands', async () => {
    const brands = [await app.seedBrand(), await app.seedBrand(), await app.seedBrand()];
    for (const brand of brands) {
      await mintCompleted(app.ctx, brand, 3);
      await mintCompleted(app.ctx, brand, 3);
    }
    const [{ n }] = (await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from payload_packs where status = 'pending'`)) as [{ n: string }];
    const claims = await Promise.all(Array.from({ length: 16 }, () => claimPayloadPack(app.ctx)));
    const won = claims.filter((c) => c !== null);
    // Every claim that won holds a distinct pack with attempts 1; losers found another or nothing.
    expect(new Set(won.map((c) => c.id)).size).toBe(won.length);
    expect(won.every((c) => c.attempts === 1)).toBe(true);
    const [{ held }] = (await query<{ held: string }>(app.db.em.fork(), `select count(*) as held from payload_packs where status = 'generating'`)) as [
      { held: string },
    ];
    expect(Number(held)).toBe(won.length);
    // Nothing claimable is left behind once everyone has had a go.
    while (await claimPayloadPack(app.ctx)) {
      /* drain */
    }
    const [{ left }] = (await query<{ left: string }>(app.db.em.fork(), `select count(*) as left from payload_packs where status = 'pending'`)) as [
      { left: string },
    ];
    expect(left).toBe('0');
    expect(Number(n)).toBeGreaterThanOrEqual(6);
    await run(app.db.em.fork(), `update payload_packs set status = 'ready', lease_expires_at = null`);
  });

  it('publish each outbox message exactly once from several relays running at once', async () => {
    const brand = await app.seedBrand();
    // Messages left by earlier tests are relayed first.
    await relayOutbox(app.ctx, async () => undefined, 1_000);
    const jobs = [];
    for (let i = 0; i < 40; i++) jobs.push((await submitSerial(app.ctx, brand, 1)).mintJobId);
    const published: OutboxJob[] = [];
    const publish = async (job: OutboxJob) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      published.push(job);
    };
    const relays = await Promise.all(Array.from({ length: 4 }, () => relayOutbox(app.ctx, publish, 40)));
    expect(relays.reduce((a, b) => a + b, 0)).toBe(40);
    expect(published.map((j) => j.id).sort()).toEqual([...jobs].sort());
    const [{ n }] = (await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox')) as [{ n: string }];
    expect(n).toBe('0');
  });

  it('keep a failed publish in the outbox for the next pass', async () => {
    const brand = await app.seedBrand();
    const { mintJobId } = await submitSerial(app.ctx, brand, 1);
    await expect(
      relayOutbox(app.ctx, async () => {
        throw new Error('bus down');
      }),
    ).rejects.toThrow('bus down');
    const [{ n }] = (await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox where job_id = ?', [mintJobId])) as [{ n: string }];
    expect(n).toBe('1');
    await relayOutbox(app.ctx, async () => undefined, 1_000);
  });

  it('never hand one webhook delivery to two workers, and keep the per-endpoint limit across them', async () => {
    const brand = await app.seedBrand();
    await createWebhookEndpoint(
      app.ctx,
      { id: brand.userId },
      { allowLoopback: true },
      {
        brandId: brand.brandId,
        url: 'http://127.0.0.1:9/hook',
        eventTypes: [],
        description: '',
      },
    );
    for (let i = 0; i < 3; i++) await mintCompleted(app.ctx, brand, 2);
    await drainWebhookFanout(app.ctx);
    const [{ due }] = (await query<{ due: string }>(
      app.db.em.fork(),
      `select count(*) as due from webhook_deliveries where brand_id = ? and status = 'pending'`,
      [brand.brandId],
    )) as [{ due: string }];
    expect(Number(due)).toBeGreaterThan(4);
    const batches = await Promise.all(Array.from({ length: 6 }, () => claimWebhooks(app.ctx, 10, { perEndpoint: 2 })));
    const claimed = batches.flatMap((b) => b.claims);
    expect(new Set(claimed.map((c) => c.id)).size).toBe(claimed.length);
    expect(claimed.length).toBeLessThanOrEqual(2);
    expect(claimed.length).toBeGreaterThan(0);
    const [{ delivering }] = (await query<{ delivering: string }>(
      app.db.em.fork(),
      `select count(*) as delivering from webhook_deliveries where brand_id = ? and status = 'delivering'`,
      [brand.brandId],
    )) as [{ delivering: string }];
    expect(Number(delivering)).toBe(claimed.length);
  });

  it("take the brands round robin: each brand's oldest before any brand's second, the next claim after the last brand, at most perBrand in flight", async () => {
    // Only this test's deliveries are due.
    await run(app.db.em.fork(), `update webhook_deliveries set status = 'failed' where status in ('pending', 'delivering')`);
    const brands = [await app.seedBrand(), await app.seedBrand(), await app.seedBrand()].sort((a, b) => (a.brandId < b.brandId ? -1 : 1));
    for (const brand of brands) {
      for (const path of ['/a', '/b']) {
        await createWebhookEndpoint(
          app.ctx,
          { id: brand.userId },
          { allowLoopback: true },
          {
            brandId: brand.brandId,
            url: `http://127.0.0.1:9${path}`,
            eventTypes: ['mint_units_activated'],
            description: '',
          },
        );
      }
      await app.db.em.fork().transactional((em) =>
        appendEvents(
          em,
          new Date(),
          Array.from({ length: 5 }, () => ({
            brandId: brand.brandId,
            eventType: 'mint_units_activated' as const,
            entityType: 'mint_batch' as const,
            entityId: brand.productId,
            actor: null,
            payload: {},
          })),
        ),
      );
    }
    await drainWebhookFanout(app.ctx);
    const ids = brands.map((b) => b.brandId);
    const first = await claimWebhooks(app.ctx, 3, { perEndpoint: 10, perBrand: 3 });
    expect(first.claims.map((c) => c.brandId)).toEqual(ids);
    expect(first.lastBrand).toBe(ids[2]);
    // After the last brand: wrapped around to the first two.
    const second = await claimWebhooks(app.ctx, 2, { perEndpoint: 10, perBrand: 3, afterBrand: first.lastBrand });
    expect(second.claims.map((c) => c.brandId)).toEqual(ids.slice(0, 2));
    expect(second.lastBrand).toBe(ids[1]);
    // With room for all: round by round from the third brand, each brand up to perBrand (3) in flight (it holds 1, the others 2).
    const third = await claimWebhooks(app.ctx, 20, { perEndpoint: 10, perBrand: 3, afterBrand: second.lastBrand });
    expect(third.claims.map((c) => c.brandId)).toEqual([ids[2], ids[0], ids[1], ids[2]]);
    const inFlight = await query<{ brand_id: string; n: string }>(
      app.db.em.fork(),
      `select brand_id, count(*) as n from webhook_deliveries where status = 'delivering' group by brand_id`,
    );
    expect(inFlight.map((r) => Number(r.n))).toEqual([3, 3, 3]);
  });
});
