// The webhook fan-out out of the writer's transaction: a write inserts its event and one small
// marker whatever the brand's endpoints; the webhook worker's fan-out (fanOutWebhookEvents) writes
// the deliveries afterwards, exactly once per event and endpoint even when a pass is interrupted
// and run again, fairly across brands and bounded per pass. Real PostgreSQL.

import { appendEvents, insertFanoutDeliveries, takeWebhookFanouts, transaction } from '@mint/db';
import { createWebhookEndpoint, drainWebhookFanout, fanOutWebhookEvents, updateWebhookEndpointOf, upsertLink } from '@mint/usecases';
import { describe, expect, it } from 'vitest';
import { query, run } from './support/sql.ts';
import { useUseCases, type SeededBrand } from './support/usecases.ts';

const { app } = useUseCases();

/** `n` enabled endpoints of the brand wanting every event, inserted in one statement (their secrets are never used: nothing is sent here). */
async function endpoints(brand: SeededBrand, n: number): Promise<void> {
  await run(
    app.db.em.fork(),
    `insert into webhook_endpoints (brand_id, id, url, event_types, secret, created_at, updated_at)
    select ?, gen_random_uuid(), 'https://receiver.example/' || i, '{}', 'unused', now(), now() from generate_series(1, ?) as i`,
    [brand.brandId, n],
  );
}

async function upsertOne(brand: SeededBrand, href: string): Promise<void> {
  await upsertLink(
    app.ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      gtin: null,
      lot: null,
      serial: null,
      linkType: 'gs1:pip',
      href,
      title: 'Passport',
      hreflang: [],
      mediaType: null,
      context: [],
      fwqs: true,
      isDefault: false,
    },
  );
}

/** The brand's deliveries of link upserts: how many, over how many distinct endpoints, and their ids. */
async function linkDeliveries(brandId: string): Promise<{ n: number; endpoints: number; ids: Set<string> }> {
  const rows = await query<{ id: string; endpoint_id: string }>(
    app.db.em.fork(),
    `select id, endpoint_id from webhook_deliveries where brand_id = ? and event_type = 'resolver_link_upserted'`,
    [brandId],
  );
  return { n: rows.length, endpoints: new Set(rows.map((r) => r.endpoint_id)).size, ids: new Set(rows.map((r) => r.id)) };
}

const markers = async (brandId: string) =>
  Number((await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from webhook_fanouts where brand_id = ?', [brandId]))[0]!.n);

describe('webhook fan-out', () => {
  it('UpsertLink with 1,000 endpoints writes no delivery in its own transaction; the fan-out writes all 1,000 exactly once, also interrupted and run twice', async () => {
    const brand = await app.seedBrand();
    await endpoints(brand, 1_000);
    await upsertOne(brand, 'https://example.com/p/1');
    // Committed: the event and one marker, no delivery (with the writer's fan-out, 1,000 were already here).
    expect((await linkDeliveries(brand.brandId)).n).toBe(0);
    expect(await markers(brand.brandId)).toBe(1);

    // A pass that dies after writing the deliveries, before deleting its marker, leaves nothing: one transaction.
    await expect(
      transaction(app.db, async (em) => {
        const taken = await takeWebhookFanouts(em, brand.brandId, 10);
        expect(await insertFanoutDeliveries(em, brand.brandId, taken)).toBe(1_000);
        throw new Error('executor killed');
      }),
    ).rejects.toThrow('executor killed');
    expect((await linkDeliveries(brand.brandId)).n).toBe(0);
    expect(await markers(brand.brandId)).toBe(1);

    // Deliveries committed without their marker's delete (a crash between the two, had they been
    // apart), 400 of them kept: the passes after write only the 600 missing.
    await transaction(app.db, async (em) => insertFanoutDeliveries(em, brand.brandId, await takeWebhookFanouts(em, brand.brandId, 10)));
    await run(
      app.db.em.fork(),
      `delete from webhook_deliveries where brand_id = ? and id in (
      select id from webhook_deliveries where brand_id = ? and event_type = 'resolver_link_upserted' order by id offset 400)`,
      [brand.brandId, brand.brandId],
    );
    const kept = (await linkDeliveries(brand.brandId)).ids;
    expect(kept.size).toBe(400);

    // Two passes at once (two executors), then a third: each endpoint gets the event exactly once.
    const passes = await Promise.all([fanOutWebhookEvents(app.ctx), fanOutWebhookEvents(app.ctx)]);
    await fanOutWebhookEvents(app.ctx);
    expect(passes.reduce((sum, p) => sum + p.deliveries, 0)).toBeLessThanOrEqual(600);
    const after = await linkDeliveries(brand.brandId);
    expect(after.n).toBe(1_000);
    expect(after.endpoints).toBe(1_000);
    for (const id of kept) expect(after.ids.has(id)).toBe(true);
    expect(await markers(brand.brandId)).toBe(0);
    expect((await drainWebhookFanout(app.ctx)).deliveries).toBe(0);
    expect((await linkDeliveries(brand.brandId)).n).toBe(1_000);
  }, 60_000);

  it('gives an event to the endpoints enabled when its statement ran, whatever happens to them before the fan-out', async () => {
    const brand = await app.seedBrand();
    const actor = { id: brand.userId };
    const create = async (url: string, eventTypes: string[] = []) =>
      (await createWebhookEndpoint(app.ctx, actor, { allowLoopback: false }, { brandId: brand.brandId, url, eventTypes, description: '' })).endpoint.id;
    const kept = await create('https://receiver.example/kept');
    const disabledAfter = await create('https://receiver.example/disabled-after');
    const disabledBefore = await create('https://receiver.example/disabled-before');
    const other = await create('https://receiver.example/other', ['mint_units_activated']);
    await updateWebhookEndpointOf(app.ctx, actor, { allowLoopback: false }, { brandId: brand.brandId, endpointId: disabledBefore, enabled: false });
    await drainWebhookFanout(app.ctx);
    await upsertOne(brand, 'https://example.com/p/rule');
    // Between the write and the fan-out: one endpoint created, one disabled, one enabled again.
    const createdAfter = await create('https://receiver.example/created-after');
    await updateWebhookEndpointOf(app.ctx, actor, { allowLoopback: false }, { brandId: brand.brandId, endpointId: disabledAfter, enabled: false });
    await updateWebhookEndpointOf(app.ctx, actor, { allowLoopback: false }, { brandId: brand.brandId, endpointId: disabledBefore, enabled: true });
    await drainWebhookFanout(app.ctx);
    const got = await query<{ endpoint_id: string }>(
      app.db.em.fork(),
      `select endpoint_id from webhook_deliveries where brand_id = ? and event_type = 'resolver_link_upserted'`,
      [brand.brandId],
    );
    // Enabled when written (one of them disabled since: its delivery waits, parked, as before); not
    // the one disabled then, nor the one created after, nor the one whose filter does not want it.
    expect(got.map((r) => r.endpoint_id).sort()).toEqual([kept, disabledAfter].sort());
    expect([createdAfter, disabledBefore, other].some((id) => got.some((r) => r.endpoint_id === id))).toBe(false);
  });

  it('writes no marker for an event no enabled endpoint wants, and serves brands round robin, bounded per pass', async () => {
    const quiet = await app.seedBrand();
    await upsertOne(quiet, 'https://example.com/p/quiet');
    expect(await markers(quiet.brandId)).toBe(0);
    await drainWebhookFanout(app.ctx);
    // A brand with 1,000 endpoints and 3 events, two brands with 2 endpoints and 3 events each.
    const big = await app.seedBrand();
    const small = [await app.seedBrand(), await app.seedBrand()];
    await endpoints(big, 1_000);
    for (const brand of small) await endpoints(brand, 2);
    for (const brand of [big, ...small]) {
      await app.db.em.fork().transactional((em) =>
        appendEvents(
          em,
          new Date(),
          Array.from({ length: 3 }, () => ({
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
    const ids = [big, ...small].map((b) => b.brandId).sort();
    // One pass serves every brand waiting, at most deliveriesPerBrand (1,000) of a brand: the big
    // brand's one event, each small brand's three; the big brand's backlog delays no one.
    const pass = await fanOutWebhookEvents(app.ctx, { deliveriesPerBrand: 1_000 });
    expect(pass).toEqual({ events: 1 + 3 + 3, deliveries: 1_000 + 6 + 6, lastBrand: ids[2] });
    expect(await markers(big.brandId)).toBe(2);
    for (const brand of small) expect(await markers(brand.brandId)).toBe(0);
    // At most `brands` brands a pass, the next pass after the last one served (round robin).
    const one = await fanOutWebhookEvents(app.ctx, { brands: 1, afterBrand: null });
    expect(one).toEqual({ events: 1, deliveries: 1_000, lastBrand: big.brandId });
    await drainWebhookFanout(app.ctx);
    expect(await markers(big.brandId)).toBe(0);
  }, 60_000);
});
