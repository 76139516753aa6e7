// A partner's bulk return (OPEN-SCS return) through the API's interceptor chain with real partner
// keys (x-api-key) and the executor running the chunks: partner A returns every unused serial of
// its allocation in one request (ReturnUnusedSerials), chunk after chunk; the encoded, scrapped and
// commissioned ones stay, partner B's allocation is untouched, a repeat of the key moves nothing,
// a brand key cannot call it, and no returned serial is allocated or issued again.

import { Code, createClient, type Client } from '@connectrpc/connect';
import { type MintService, PartnerService, SerialAction, SerialState } from '@mint/contract';
import type { UseCaseContext } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessExecutor, waitUntil, type InProcessExecutor } from '../services/executor/test/executor-process.ts';
import { bearer, errorOf, inProcessApi } from '../services/api/test/support.ts';
import { testInfra } from './support/context.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

let app: UseCaseBundle;
let ctx: UseCaseContext;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
let partners: Client<typeof PartnerService>;
let executor: InProcessExecutor;
const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

beforeAll(async () => {
  app = await setupUseCases();
  // Chunks of 500 units on the API and the executor alike.
  ctx = { ...app.ctx, serialMoveChunk: 500 };
  const api = inProcessApi({ ctx });
  mint = api.mint;
  partners = createClient(PartnerService, api.transport);
  brand = await app.seedBrand();
  executor = await startInProcessExecutor({ ...app, ctx }, testInfra().natsUrl, { serialMovePollIntervalMs: 20 });
});
afterAll(async () => {
  await executor?.stop();
  await app?.close();
});

async function grant(name: string, mintBatchId: string, quota: number): Promise<string> {
  const { partnerId } = await partners.createPartner({ brandId: brand.brandId, name }, bearer(brand.token));
  const granted = await partners.grantPartnerKey(
    { brandId: brand.brandId, partnerId, name: `${name} line`, restriction: { case: 'mintBatchId', value: mintBatchId }, quota },
    bearer(brand.token),
  );
  return granted.apiKey;
}

/** Each unit's state of the batch by serial. */
async function statesOf(batchId: string): Promise<Map<string, string>> {
  const found = await query<{ serial: string; state: string }>(
    app.db.em.fork(),
    `select u.serial, coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) as state
     from mint_units u left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
     where u.mint_batch_id = ?`,
    [batchId],
  );
  return new Map(found.map((r) => [r.serial, r.state]));
}

describe('ReturnUnusedSerials', () => {
  it("returns every unused serial of the partner's allocation in one request, chunked by the executor, never to be issued again", {
    timeout: 180_000,
  }, async () => {
    const { mintBatchId: batch } = await mintCompleted(ctx, brand, 2_600, { activationMode: 'first_scan' });
    const keyA = await grant('Contract manufacturer A', batch, 2_000);
    const keyB = await grant('Packaging line B', batch, 600);
    const a = (await partners.allocateSerials({ brandId: brand.brandId, quantity: 2_000, idempotencyKey: 'a-1' }, withKey(keyA))).serials.map((s) => s.serial);
    const b = (await partners.allocateSerials({ brandId: brand.brandId, quantity: 300, idempotencyKey: 'b-1' }, withKey(keyB))).serials.map((s) => s.serial);
    // A encodes 500, scraps 50 of them and commissions 400: 1,500 of its serials stay unused.
    const report = (action: SerialAction, serials: string[], key: string) =>
      mint.moveSerials({ brandId: brand.brandId, action, target: { case: 'serials', value: { serials } }, idempotencyKey: key }, withKey(keyA));
    await report(SerialAction.ENCODE, a.slice(0, 500), 'enc');
    await report(SerialAction.SCRAP, a.slice(0, 50), 'scrap');
    await report(SerialAction.COMMISSION, a.slice(50, 450), 'comm');

    // A brand key may not return a partner's allocation.
    const byBrand = await errorOf(partners.returnUnusedSerials({ brandId: brand.brandId, idempotencyKey: 'r-1' }, bearer(brand.token)));
    expect(byBrand.code).toBe(Code.PermissionDenied);

    const started = await partners.returnUnusedSerials({ brandId: brand.brandId, idempotencyKey: 'r-1' }, withKey(keyA));
    expect(started.move).toMatchObject({ action: SerialAction.RETURN, status: 'running', total: 1_500, moved: 500, refused: 0 });
    const moveId = started.move!.moveId;
    await waitUntil(
      'the executor to finish the return',
      async () => (await mint.getSerialMove({ brandId: brand.brandId, moveId }, withKey(keyA))).move!.status === 'done',
    );
    expect((await mint.getSerialMove({ brandId: brand.brandId, moveId }, withKey(keyA))).move).toMatchObject({
      total: 1_500,
      moved: 1_500,
      refused: 0,
      refusals: [],
    });
    // A repeat of the key answers the return and moves nothing.
    expect((await partners.returnUnusedSerials({ brandId: brand.brandId, idempotencyKey: 'r-1' }, withKey(keyA))).move).toMatchObject({
      moveId,
      replayed: true,
      moved: 1_500,
    });
    // Another return finds nothing left to return.
    expect((await partners.returnUnusedSerials({ brandId: brand.brandId, idempotencyKey: 'r-2' }, withKey(keyA))).move).toMatchObject({
      status: 'done',
      total: 0,
      moved: 0,
    });

    const states = await statesOf(batch);
    const count = (serials: string[], state: string) => serials.filter((s) => states.get(s) === state).length;
    expect(count(a.slice(0, 50), 'scrapped')).toBe(50);
    expect(count(a.slice(50, 450), 'commissioned')).toBe(400);
    expect(count(a.slice(450, 500), 'encoded')).toBe(50);
    expect(count(a.slice(500), 'returned')).toBe(1_500);
    expect(count(b, 'issued')).toBe(300);
    expect([...states.values()].filter((s) => s === 'returned')).toHaveLength(1_500);
    // The return's EPCIS events are A's: every returned unit once, as decommissioning/returned.
    const [events] = await query<{ epcs: string; distinct_epcs: string; partners: string }>(
      app.db.em.fork(),
      `select count(*) as epcs, count(distinct e) as distinct_epcs, count(distinct partner_id) as partners
       from epcis_events, unnest(epcs) as e where move_id = ? and biz_step = 'decommissioning' and disposition = 'returned'`,
      [moveId],
    );
    expect(events).toEqual({ epcs: '1500', distinct_epcs: '1500', partners: '1' });

    // Never issued again: B takes the 300 serials never allocated, none of A's returned, then there is none left.
    const more = await partners.allocateSerials({ brandId: brand.brandId, quantity: 300, idempotencyKey: 'b-2' }, withKey(keyB));
    const returned = new Set(a.slice(500));
    expect(more.serials.filter((s) => returned.has(s.serial) || a.includes(s.serial))).toEqual([]);
    const none = await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 1, idempotencyKey: 'b-3' }, withKey(keyB)));
    expect(none.code).toBe(Code.FailedPrecondition);
    // And the brand cannot put a returned serial back in circulation.
    const recommission = await mint.moveSerials(
      { brandId: brand.brandId, action: SerialAction.COMMISSION, target: { case: 'serials', value: { serials: a.slice(500, 503) } }, idempotencyKey: 'back' },
      bearer(brand.token),
    );
    expect(recommission.move!.refusals.map((r) => [r.refusal, r.state])).toEqual(Array(3).fill(['wrong_state', SerialState.RETURNED]));
  });
});
