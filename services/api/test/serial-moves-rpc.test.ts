// MoveSerials and GetSerialMove over Connect (in process) and /v1/rpc/move_serials on a real
// server: the report, the permission, the state named in a refusal, and the error codes.

import { Code, createClient, type Client } from '@connectrpc/connect';
import { ActivationMode, DecommissionReason, IdentityMode, MintService, SerialAction, SerialState } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, codeOf, inProcessApi, postJson, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
const as = () => bearer(brand.token);

beforeAll(async () => {
  app = await setupUseCases();
  ({ mint } = inProcessApi(app));
  api = await startTestApi(app);
  brand = await app.seedBrand();
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

async function mintBatch(quantity: number): Promise<{ batchId: string; serials: string[] }> {
  const submitted = await mint.submitMintRequest(
    {
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: quantity,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
    },
    as(),
  );
  for (let i = 0; i < 20; i++) if ((await mint.processMintJobBatch({ brandId: brand.brandId, jobId: submitted.mintJobId!, maxUnits: 1000 }, as())).done) break;
  const serials = (
    await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [submitted.mintBatchId])
  ).map((r) => r.serial);
  return { batchId: submitted.mintBatchId!, serials };
}

describe('MoveSerials', () => {
  it('decommissions over Connect with a report, replays its key, and reads the move back', async () => {
    const { batchId, serials } = await mintBatch(30);
    const request = {
      brandId: brand.brandId,
      action: SerialAction.DECOMMISSION,
      reason: DecommissionReason.RECALLED,
      target: { case: 'range' as const, value: { mintBatchId: batchId, fromSeq: 1, toSeq: 10 } },
      idempotencyKey: 'recall-1',
    };
    const first = await mint.moveSerials(request, as());
    expect(first.move).toMatchObject({
      status: 'done',
      total: 10,
      moved: 10,
      refused: 0,
      replayed: false,
      action: SerialAction.DECOMMISSION,
      reason: DecommissionReason.RECALLED,
    });
    expect((await mint.moveSerials(request, as())).move).toMatchObject({ moveId: first.move!.moveId, moved: 10, replayed: true });
    const again = await mint.moveSerials(
      { ...request, idempotencyKey: 'recall-2', target: { case: 'serials', value: { serials: serials.slice(5, 15) } } },
      as(),
    );
    expect(again.move).toMatchObject({ moved: 5, refused: 5 });
    expect(again.move!.refusals[0]).toMatchObject({
      serial: serials[5],
      seq: 6,
      refusal: 'wrong_state',
      state: SerialState.DECOMMISSIONED,
      reason: DecommissionReason.RECALLED,
    });
    expect((await mint.getSerialMove({ brandId: brand.brandId, moveId: first.move!.moveId }, as())).move).toMatchObject({ moved: 10, replayed: false });
    expect((await mint.getMintKpis({ brandId: brand.brandId }, as())).activeTokens).toBe(15n);
  });

  it('answers an impossible single move with FailedPrecondition naming the state, bad input with InvalidArgument, another key use with a conflict', async () => {
    const { serials } = await mintBatch(3);
    const one = { brandId: brand.brandId, target: { case: 'serials' as const, value: { serials: [serials[0]!] } } };
    const error = await mint.moveSerials({ ...one, action: SerialAction.ENCODE, idempotencyKey: 'enc-1' }, as()).catch((e: unknown) => e);
    expect(await codeOf(Promise.reject(error))).toBe(Code.FailedPrecondition);
    expect(String(error)).toContain('serial that is commissioned');
    expect(await codeOf(mint.moveSerials({ ...one, action: SerialAction.DECOMMISSION, idempotencyKey: 'dec-1' }, as()))).toBe(Code.InvalidArgument);
    await mint.moveSerials({ ...one, action: SerialAction.DECOMMISSION, reason: DecommissionReason.DAMAGED, idempotencyKey: 'dec-2' }, as());
    expect(
      await codeOf(mint.moveSerials({ ...one, action: SerialAction.DECOMMISSION, reason: DecommissionReason.SAMPLE, idempotencyKey: 'dec-2' }, as())),
    ).toBe(Code.AlreadyExists);
  });

  it('names a range whose end is below its start by its path in the request, range.to_seq', async () => {
    const { batchId } = await mintBatch(3);
    const backwards = { case: 'range' as const, value: { mintBatchId: batchId, fromSeq: 3, toSeq: 2 } };
    const error = await mint
      .moveSerials({ brandId: brand.brandId, action: SerialAction.ENCODE, target: backwards, idempotencyKey: 'backwards' }, as())
      .catch((e: unknown) => e);
    expect(await codeOf(Promise.reject(error))).toBe(Code.InvalidArgument);
    expect((error as Error).message).toContain('range.to_seq: must not be below range.from_seq');
  });

  it("is served on /v1/rpc/move_serials with the spec's spellings", async () => {
    const { serials } = await mintBatch(5);
    const res = await postJson(
      api,
      '/v1/rpc/move_serials',
      {
        _brand_id: brand.brandId,
        _action: 'decommission',
        _reason: 'stolen',
        _serials: { serials: serials.slice(0, 2) },
        _idempotency_key: 'v1-theft',
      },
      { authorization: `Bearer ${brand.token}` },
    );
    const body = (await res.json()) as { ok: boolean; move: { moved: number; action: string; reason: string } };
    expect([res.status, body]).toMatchObject([200, {}]);
    expect(body).toMatchObject({ ok: true, move: { moved: 2, action: 'decommission', reason: 'stolen' } });
  });

  it('accounts for every serial of a batch in GetMintBatchReconciliation and on /v1', async () => {
    const { batchId, serials } = await mintBatch(8);
    await mint.moveSerials(
      {
        brandId: brand.brandId,
        action: SerialAction.DECOMMISSION,
        reason: DecommissionReason.EXPIRED,
        target: { case: 'serials', value: { serials: serials.slice(0, 3) } },
        idempotencyKey: 'expire-3',
      },
      as(),
    );
    const r = await mint.getMintBatchReconciliation({ brandId: brand.brandId, mintBatchId: batchId }, as());
    expect(r).toMatchObject({ requested: 8, minted: 8, notMinted: 0, balanced: true, byReason: [{ name: 'expired', count: 3 }] });
    expect(r.byState.filter((c) => c.count > 0).map((c) => [c.name, c.count])).toEqual([
      ['commissioned', 5],
      ['decommissioned', 3],
    ]);
    expect(r.csv).toContain('reason,expired,3\n');
    const res = await postJson(
      api,
      '/v1/rpc/get_mint_batch_reconciliation',
      { _brand_id: brand.brandId, _mint_batch_id: batchId },
      { authorization: `Bearer ${brand.token}` },
    );
    expect([res.status, await res.json()]).toMatchObject([200, { ok: true, balanced: true, minted: 8 }]);
  });

  it('refuses a caller without a role on the brand', async () => {
    const stranger = await app.seedBrand();
    const client = createClient(MintService, inProcessApi(app).transport);
    expect(
      await codeOf(
        client.moveSerials(
          {
            brandId: brand.brandId,
            action: SerialAction.ENCODE,
            target: { case: 'serials', value: { serials: ['X'] } },
            idempotencyKey: 'k',
          },
          bearer(stranger.token),
        ),
      ),
    ).toBe(Code.PermissionDenied);
  });
});
