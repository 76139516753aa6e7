// Partners pack what they were allocated, through the API's whole interceptor chain with real
// partner keys (x-api-key): a partner key mints its own cases and pallets, packs into them only
// units allocated to it and containers it minted, unpacks and reads only its own containers; another
// partner's units and containers, and the brand's containers, are refused with an error naming
// each; idempotency keys of two partners never meet. The resolver's /00/{sscc} shows a container's
// contents to the brand and the partner that packed it, never to the public or another partner.

import { Code, createClient, type Client } from '@connectrpc/connect';
import { type MintService, PartnerService, SerialAction } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, errorOf, inProcessApi, startTestApi, type TestApi } from '../services/api/test/support.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

let app: UseCaseBundle;
let http: TestApi;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
let partners: Client<typeof PartnerService>;
const asBrand = () => bearer(brand.token);
const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

beforeAll(async () => {
  app = await setupUseCases();
  const api = inProcessApi(app);
  mint = api.mint;
  partners = createClient(PartnerService, api.transport);
  http = await startTestApi(app);
  brand = await app.seedBrand();
});
afterAll(async () => {
  await http?.close();
  await app?.close();
});

async function grant(name: string, batch: string, quota: number): Promise<string> {
  const { partnerId } = await partners.createPartner({ brandId: brand.brandId, name }, asBrand());
  return (
    await partners.grantPartnerKey(
      { brandId: brand.brandId, partnerId, name: `${name} key`, restriction: { case: 'mintBatchId', value: batch }, quota },
      asBrand(),
    )
  ).apiKey;
}

/** Allocates `quantity` serials to the key and commissions the first `commission` of them. */
async function allocateAndCommission(key: string, quantity: number, commission: number): Promise<string[]> {
  const allocated = (await partners.allocateSerials({ brandId: brand.brandId, quantity, idempotencyKey: 'alloc' }, withKey(key))).serials.map((s) => s.serial);
  for (const action of [SerialAction.ENCODE, SerialAction.COMMISSION]) {
    const moved = await mint.moveSerials(
      {
        brandId: brand.brandId,
        action,
        target: { case: 'serials', value: { serials: allocated.slice(0, commission) } },
        idempotencyKey: `move-${action}`,
      },
      withKey(key),
    );
    expect(moved.move).toMatchObject({ moved: commission, refused: 0 });
  }
  return allocated;
}

const mintAs = async (key: string | null, level: string, count: number, idempotencyKey: string) =>
  (await mint.mintContainers({ brandId: brand.brandId, level, count, extensionDigit: 2, idempotencyKey }, key === null ? asBrand() : withKey(key))).ssccs;
const packAs = (key: string, sscc: string, serials: readonly string[], ssccs: readonly string[], idempotencyKey: string) =>
  mint.packContainer({ brandId: brand.brandId, sscc, serials: [...serials], ssccs: [...ssccs], idempotencyKey }, withKey(key));
const unitsIn = async (sscc: string) => (await mint.getContainer({ brandId: brand.brandId, sscc, limit: 1000 }, asBrand())).units.map((u) => u.serial);

describe('partners packing their allocation', () => {
  let keyA: string;
  let keyB: string;
  let aUnits: string[];
  let bUnits: string[];
  let aCases: string[];
  let aPallet: string;
  let bCase: string;
  let brandCase: string;
  let slug: string;

  it('lets a partner key mint containers and pack only its own commissioned units into them', async () => {
    const { mintBatchId: batch } = await mintCompleted(app.ctx, brand, 200, { activationMode: 'first_scan' });
    await mint.setContainerSettings({ brandId: brand.brandId, gs1CompanyPrefix: '0614141' }, asBrand());
    keyA = await grant('Contract manufacturer A', batch, 100);
    keyB = await grant('Packaging line B', batch, 50);
    aUnits = await allocateAndCommission(keyA, 100, 40);
    bUnits = await allocateAndCommission(keyB, 50, 20);

    aCases = await mintAs(keyA, 'case', 3, 'cases');
    [aPallet] = (await mintAs(keyA, 'pallet', 1, 'pallets')) as [string];
    [bCase] = (await mintAs(keyB, 'case', 1, 'cases')) as [string];
    [brandCase] = (await mintAs(null, 'case', 1, 'cases')) as [string];
    // The same idempotency key under three callers: three mints, no SSCC twice.
    expect(new Set([...aCases, aPallet, bCase, brandCase]).size).toBe(6);

    expect(await packAs(keyA, aCases[0]!, aUnits.slice(0, 10), [], 'p')).toMatchObject({ units: 10, containers: 0, replayed: false });
    expect(await packAs(keyB, bCase, bUnits.slice(0, 10), [], 'p')).toMatchObject({ units: 10, replayed: false });
    expect(await packAs(keyA, aCases[0]!, aUnits.slice(0, 10), [], 'p')).toMatchObject({ units: 10, replayed: true });
    expect(await unitsIn(aCases[0]!)).toEqual(aUnits.slice(0, 10));
    expect(await unitsIn(bCase)).toEqual(bUnits.slice(0, 10));
  });

  it("refuses another partner's units and containers and the brand's containers, naming each, and packs nothing", async () => {
    // B's commissioned units into A's case: each named as not in A's allocation.
    const foreignUnits = await errorOf(packAs(keyA, aCases[1]!, [aUnits[10]!, bUnits[10]!, bUnits[11]!], [], 'p2'));
    expect(foreignUnits.code).toBe(Code.PermissionDenied);
    expect(foreignUnits.rawMessage).toContain(`serial ${bUnits[10]} is not in this partner's allocation`);
    expect(foreignUnits.rawMessage).toContain(`serial ${bUnits[11]} is not in this partner's allocation`);
    expect(foreignUnits.rawMessage).not.toContain(`serial ${aUnits[10]} `);
    expect(await unitsIn(aCases[1]!)).toEqual([]);
    // A's own unit that is not commissioned: the packing rule, naming its state.
    const notCommissioned = await errorOf(packAs(keyA, aCases[1]!, [aUnits[60]!], [], 'p3'));
    expect(notCommissioned.code).toBe(Code.FailedPrecondition);
    expect(notCommissioned.rawMessage).toContain(`serial ${aUnits[60]} is not commissioned (it is issued)`);
    // Into B's case or the brand's case; B's case into A's pallet.
    for (const [sscc, k] of [
      [bCase, 'p4'],
      [brandCase, 'p5'],
    ] as const) {
      const refused = await errorOf(packAs(keyA, sscc, [aUnits[10]!], [], k));
      expect(refused.code).toBe(Code.PermissionDenied);
      expect(refused.rawMessage).toContain(`container ${sscc} is not this partner's`);
    }
    const foreignCase = await errorOf(packAs(keyA, aPallet, [], [aCases[0]!, bCase], 'p6'));
    expect(foreignCase.code).toBe(Code.PermissionDenied);
    expect(foreignCase.rawMessage).toContain(`container ${bCase} is not this partner's`);
    expect((await mint.getContainer({ brandId: brand.brandId, sscc: aPallet }, asBrand())).container).toMatchObject({ containerCount: 0, unitCount: 0 });
    // Unpacking B's case, reading it, or the brand's settings: refused.
    const unpack = await errorOf(mint.unpackContainer({ brandId: brand.brandId, sscc: bCase, serials: [], ssccs: [], idempotencyKey: 'u1' }, withKey(keyA)));
    expect(unpack.code).toBe(Code.PermissionDenied);
    expect(await unitsIn(bCase)).toEqual(bUnits.slice(0, 10));
    expect((await errorOf(mint.getContainer({ brandId: brand.brandId, sscc: bCase }, withKey(keyA)))).code).toBe(Code.NotFound);
    expect((await errorOf(mint.getContainer({ brandId: brand.brandId, sscc: brandCase }, withKey(keyA)))).code).toBe(Code.NotFound);
    const settings = await errorOf(mint.setContainerSettings({ brandId: brand.brandId, maxDepth: 3 }, withKey(keyA)));
    expect(settings.code).toBe(Code.PermissionDenied);
  });

  it('packs cases into pallets, unpacks and re-packs its own, and reads them', async () => {
    expect(await packAs(keyA, aCases[1]!, aUnits.slice(10, 20), [], 'p7')).toMatchObject({ units: 10 });
    expect(await packAs(keyA, aPallet, [], aCases.slice(0, 2), 'p8')).toMatchObject({ containers: 2 });
    const unpacked = await mint.unpackContainer(
      { brandId: brand.brandId, sscc: aCases[1]!, serials: aUnits.slice(10, 12), ssccs: [], idempotencyKey: 'u2' },
      withKey(keyA),
    );
    expect(unpacked).toMatchObject({ units: 2 });
    expect(await packAs(keyA, aCases[2]!, aUnits.slice(10, 12), [], 'p9')).toMatchObject({ units: 2 });
    const seen = await mint.getContainer({ brandId: brand.brandId, sscc: aPallet, limit: 10 }, withKey(keyA));
    expect(seen.container).toMatchObject({ sscc: aPallet, level: 'pallet', containerCount: 2 });
    expect(seen.containers.map((c) => c.sscc)).toEqual(aCases.slice(0, 2));
    // Every packing event names EPCs commissioned before it.
    const events = await query<{ body: Record<string, unknown>; biz_step: string; event_type: string }>(
      app.db.em.fork(),
      'select body, biz_step, event_type from epcis_events where brand_id = ? order by event_time, record_time, id',
      [brand.brandId],
    );
    const commissioned = new Set<string>();
    const lacking: string[] = [];
    for (const e of events) {
      if (e.biz_step === 'commissioning') for (const epc of e.body['epcList'] as string[]) commissioned.add(epc);
      if (e.event_type === 'AggregationEvent' && e.body['action'] === 'ADD')
        lacking.push(...[String(e.body['parentID']), ...(e.body['childEPCs'] as string[])].filter((epc) => !commissioned.has(epc)));
    }
    expect(events.filter((e) => e.biz_step === 'packing')).toHaveLength(5);
    expect(lacking).toEqual([]);
    [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
  });

  it("shows a container's contents on /00/{sscc} to the brand and the partner that packed it, not to the public or another partner", async () => {
    const contentsFor = async (headers: Record<string, string>) => {
      const res = await fetch(`${http.baseUrl}/r/${slug}/00/${aCases[0]}`, { headers: { accept: 'application/json', ...headers } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { state: string; contents?: { units: { serial: string }[] } };
      expect(body.state).toBe('commissioned');
      return body.contents?.units.map((u) => u.serial) ?? null;
    };
    expect(await contentsFor({ authorization: `Bearer ${brand.token}` })).toEqual(aUnits.slice(0, 10));
    expect(await contentsFor({ 'x-api-key': keyA })).toEqual(aUnits.slice(0, 10));
    expect(await contentsFor({})).toBeNull();
    expect(await contentsFor({ 'x-api-key': keyB })).toBeNull();
  });
});
