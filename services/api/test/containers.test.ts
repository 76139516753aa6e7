// Containers over the wire: the aggregation RPCs as Connect JSON calls and /v1 named operations,
// MoveSerials on a container, and the resolver's /r/{slug}/00/{sscc}, which tells anyone that a
// container exists and its state and only the brand what it holds; an unknown SSCC or another
// brand's answers the 404 of a never-issued serial.

import { ssccOf } from '@mint/domain';
import { moveSerials } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { postJson, startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
let other: SeededBrand;
let serials: string[];
let slug: string;

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  brand = await app.seedBrand();
  other = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 12, { activationMode: 'first_scan' });
  serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map(
    (r) => r.serial,
  );
  await moveSerials(
    app.ctx,
    { id: brand.userId },
    { brandId: brand.brandId, action: 'commission', reason: null, target: { serials: serials.slice(0, 10) }, idempotencyKey: 'c' },
  );
  [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

const rpc = async (method: string, body: Record<string, unknown>, who: SeededBrand = brand) => {
  const res = await postJson(api, `/mint.v1.MintService/${method}`, { brand_id: who.brandId, ...body }, { authorization: `Bearer ${who.token}` });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

let cases: string[];
let pallet: string;

describe('the aggregation RPCs', () => {
  it('set the prefix, mint, pack and get containers; bad input names its field', async () => {
    const set = await rpc('SetContainerSettings', { gs1_company_prefix: '0614141' });
    expect(set.body).toMatchObject({ ok: true, gs1_company_prefix: '0614141', max_depth: 3 });
    const badPrefix = await rpc('SetContainerSettings', { gs1_company_prefix: '12' });
    expect(badPrefix.status).toBe(400);
    expect(JSON.stringify(badPrefix.body)).toContain('gs1_company_prefix');
    const minted = await rpc('MintContainers', { level: 'case', count: 2, extension_digit: 0, idempotency_key: 'cases' });
    expect(minted.status).toBe(200);
    cases = minted.body['ssccs'] as string[];
    expect(cases).toHaveLength(2);
    // The /v1 named operation serves the same use case.
    const v1 = await postJson(
      api,
      '/v1/rpc/mint_containers',
      { _brand_id: brand.brandId, _level: 'pallet', _count: 1, _extension_digit: 0, _idempotency_key: 'pallets' },
      { authorization: `Bearer ${brand.token}` },
    );
    const v1Body = (await v1.json()) as Record<string, unknown>;
    expect(v1.status, JSON.stringify(v1Body)).toBe(200);
    pallet = (v1Body['ssccs'] as string[])[0]!;

    expect((await rpc('PackContainer', { sscc: cases[0], serials: serials.slice(0, 5), idempotency_key: 'p1' })).body).toMatchObject({ ok: true, units: 5 });
    expect((await rpc('PackContainer', { sscc: cases[1], serials: serials.slice(5, 10), idempotency_key: 'p2' })).body).toMatchObject({ ok: true, units: 5 });
    expect((await rpc('PackContainer', { sscc: pallet, ssccs: cases, idempotency_key: 'p3' })).body).toMatchObject({ ok: true, containers: 2 });
    const uncommissioned = await rpc('PackContainer', { sscc: cases[0], serials: [serials[11]], idempotency_key: 'p4' });
    expect(uncommissioned.body['code']).toBe('failed_precondition');
    expect(String(uncommissioned.body['message'])).toContain(`serial ${serials[11]} is not commissioned (it is issued)`);
    const got = await rpc('GetContainer', { sscc: pallet });
    expect(got.body).toMatchObject({
      ok: true,
      container: { sscc: pallet, level: 'pallet', state: 'commissioned', container_count: 2 },
      containers: cases.map((sscc) => ({ sscc })),
    });
    expect((await rpc('GetContainer', { sscc: pallet }, other)).status).toBe(404);
  });

  it('unpack and re-pack, and MoveSerials on a container decommissions everything inside it', async () => {
    expect((await rpc('UnpackContainer', { sscc: cases[1], serials: [serials[9]], idempotency_key: 'u1' })).body).toMatchObject({ ok: true, units: 1 });
    expect((await rpc('PackContainer', { sscc: cases[0], serials: [serials[9]], idempotency_key: 'p5' })).body).toMatchObject({ ok: true, units: 1 });
    const moved = await rpc('MoveSerials', {
      action: 'SERIAL_ACTION_DECOMMISSION',
      reason: 'DECOMMISSION_REASON_STOLEN',
      container: cases[0],
      idempotency_key: 'm1',
    });
    expect(moved.body).toMatchObject({ ok: true, move: { status: 'done', total: 6, moved: 6 } });
    const got = await rpc('GetContainer', { sscc: cases[0] });
    expect(got.body).toMatchObject({ container: { state: 'decommissioned', reason: 'DECOMMISSION_REASON_STOLEN', parent_sscc: pallet, unit_count: 6 } });
    expect((await rpc('GetContainer', { sscc: cases[1] })).body).toMatchObject({ container: { state: 'commissioned', unit_count: 4 } });
  });
});

describe('the resolver at /00/{sscc}', () => {
  const at = (sscc: string) => `${api.baseUrl}/r/${slug}/00/${sscc}`;

  it('tells anyone the container exists and its state, never its contents', async () => {
    const res = await fetch(at(pallet), { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      ok: true,
      sscc: pallet,
      uri: `${app.ctx.publicBaseUrl}/r/${slug}/00/${pallet}`,
      level: 'pallet',
      brand: 'Test Brand',
      state: 'commissioned',
      reason: null,
      in_circulation: true,
    });
    // A theft is never said publicly, as for a unit: the stolen case is only out of circulation, in every representation.
    const stolen = await fetch(at(cases[0]!), { headers: { accept: 'text/html' } });
    expect(stolen.status).toBe(410);
    const stolenPage = await stolen.text();
    expect(stolenPage).toContain('not in circulation.');
    const stolenJson = await (await fetch(at(cases[0]!), { headers: { accept: 'application/json' } })).text();
    expect(JSON.parse(stolenJson)).toMatchObject({ state: 'decommissioned', reason: null, in_circulation: false });
    const stolenLinkset = await (await fetch(at(cases[0]!), { headers: { accept: 'application/linkset+json' } })).text();
    expect(stolenLinkset).toContain('not in circulation');
    for (const answer of [stolenPage, stolenJson, stolenLinkset]) expect(answer).not.toContain('stolen');
    const linkset = await fetch(at(pallet), { headers: { accept: 'application/linkset+json' } });
    expect(((await linkset.json()) as { linkset: { anchor: string }[] }).linkset[0]!.anchor).toBe(`${app.ctx.publicBaseUrl}/r/${slug}/00/${pallet}`);
  });

  it("shows the brand its contents, paged; another brand's credentials get the public answer", async () => {
    const first = await fetch(`${at(pallet)}?limit=1`, { headers: { accept: 'application/json', authorization: `Bearer ${brand.token}` } });
    const body = (await first.json()) as { contents: { containers: { sscc: string }[]; next_cursor: string | null; container_count: number } };
    expect(body.contents).toMatchObject({ container_count: 2, containers: [{ sscc: cases[0] }] });
    const second = await fetch(`${at(pallet)}?limit=1&cursor=${body.contents.next_cursor}`, { headers: { authorization: `Bearer ${brand.token}` } });
    expect(((await second.json()) as typeof body).contents).toMatchObject({ containers: [{ sscc: cases[1] }], next_cursor: null });
    const foreign = await fetch(at(pallet), { headers: { authorization: `Bearer ${other.token}` } });
    expect(Object.keys((await foreign.json()) as object)).not.toContain('contents');
  });

  it("answers an unknown SSCC and another brand's with the same 404 bytes, and a malformed one 400", async () => {
    await rpc('SetContainerSettings', { gs1_company_prefix: '7610425' }, other);
    const theirs = ((await rpc('MintContainers', { level: 'case', count: 1, extension_digit: 0, idempotency_key: 'x' }, other)).body['ssccs'] as string[])[0]!;
    const unknown = await fetch(at(ssccOf(1, '0614141', 999_999)), { headers: { accept: 'application/json' } });
    const foreign = await fetch(at(theirs), { headers: { accept: 'application/json' } });
    expect([unknown.status, foreign.status]).toEqual([404, 404]);
    const unknownBody = await unknown.text();
    expect(await foreign.text()).toBe(unknownBody);
    expect(JSON.parse(unknownBody)).toMatchObject({ ok: false, error: 'not_found' });
    expect((await fetch(at('106141411234567890'))).status).toBe(400);
  });
});
