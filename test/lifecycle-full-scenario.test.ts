// The Proof scenario, whole, through the API's interceptor chain with a real partner key
// (x-api-key) and the brand's session: mint N units (serial, first_scan: they start issued);
// allocate 60 % to partner A; A encodes 55 %, scraps 0.2 %, commissions 54 % rounded down to whole
// pallets, mints cases and pallets and packs the commissioned units into cases of 10 and the cases
// into pallets of 50 cases (reported by EPCIS capture documents of up to 1,000 AggregationEvents,
// POSTed to /epcis/capture under A's key); A returns the 5 % it never encoded; the brand decommissions one pallet
// as stolen with one MoveSerials on its SSCC. Then exactly 50 cases and 500 units are decommissioned,
// every serial's state and partner equal an oracle computed from the inputs, the reconciliation adds
// up (per state, per partner, per reason), every EPCIS event validates against the EPCIS 2.0 JSON
// Schema, no AggregationEvent names an EPC without an earlier commissioning, and a returned serial
// is never allocated again (partner B takes every serial left; one more is refused).
//
// Sizes: N = LIFECYCLE_FULL_UNITS, 10,000 by default (CI). Commissioned = 54 % of N rounded down to
// whole pallets of 500 units: 5,000 at 10,000 (500 cases, 10 pallets; the other 400 of 54 % stay
// encoded), 54,000 at 100,000 (5,400 cases, 108 pallets: the figures) and 540,000 at
// 1,000,000. `npm run test:lifecycle:scenario:full` runs the ×10, 1,000,000 (LIFECYCLE_FULL_UNITS=100000 the figures).

import { randomUUID } from 'node:crypto';
import { Code, createClient, type Client } from '@connectrpc/connect';
import { DecommissionReason, type MintService, PartnerService, SerialAction, SerialState } from '@mint/contract';
import { epcisDocument, getMintKpis } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, errorOf, inProcessApi, startTestApi, type TestApi } from '../services/api/test/support.ts';
import { storedEpcisEvents } from './support/epcis.ts';
import { epcisValidator, mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

const n = Number(process.env['LIFECYCLE_FULL_UNITS'] ?? 10_000);
const perCase = 10;
const casesPerPallet = 50;
const perPallet = perCase * casesPerPallet;
const allocatedCount = Math.round(n * 0.6);
const encodedCount = Math.round(n * 0.55);
const scrappedCount = Math.round(n * 0.002);
const commissionedCount = Math.floor(Math.round(n * 0.54) / perPallet) * perPallet;
const caseCount = commissionedCount / perCase;
const palletCount = caseCount / casesPerPallet;
/** Most items one request names (allocation, serial list, container mint). */
const chunk = 10_000;
const slow = { timeout: Number(process.env['LIFECYCLE_FULL_TIMEOUT_MS'] ?? 3_600_000) };
const startedAt = performance.now();
/** Prints how long the scenario has run when it reaches `step` (at full size, where the time goes). */
const step = (name: string) => console.log(`lifecycle scenario at ${n} units: ${name} after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);

/** AggregationEvents one capture document holds (the most the service takes). */
const perDocument = 1000;

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
let partners: Client<typeof PartnerService>;
const asBrand = () => bearer(brand.token);
const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

beforeAll(async () => {
  app = await setupUseCases();
  const inProcess = inProcessApi(app);
  mint = inProcess.mint;
  partners = createClient(PartnerService, inProcess.transport);
  api = await startTestApi(app);
  brand = await app.seedBrand();
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

/** POSTs a capture document of `eventList` to the API under the partner key. */
async function capture(key: string, eventList: readonly unknown[]): Promise<{ status: number; body: unknown }> {
  const document = {
    '@context': ['https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld'],
    type: 'EPCISDocument',
    schemaVersion: '2.0',
    creationDate: new Date().toISOString(),
    epcisBody: { eventList },
  };
  const res = await fetch(`${api.baseUrl}/epcis/capture`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'x-workspace-id': brand.brandId, 'content-type': 'application/ld+json' },
    body: JSON.stringify(document),
  });
  return { status: res.status, body: await res.json() };
}

const slices = <T>(list: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));

async function grant(name: string, batch: string, quota: number): Promise<string> {
  const { partnerId } = await partners.createPartner({ brandId: brand.brandId, name }, asBrand());
  return (
    await partners.grantPartnerKey(
      { brandId: brand.brandId, partnerId, name: `${name} key`, restriction: { case: 'mintBatchId', value: batch }, quota },
      asBrand(),
    )
  ).apiKey;
}

/** Allocates `quantity` serials to the key, in requests of at most {@link chunk}. */
async function allocate(key: string, quantity: number, tag: string): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; out.length < quantity; i++) {
    const got = await partners.allocateSerials(
      { brandId: brand.brandId, quantity: Math.min(chunk, quantity - out.length), idempotencyKey: `${tag}-${i}` },
      withKey(key),
    );
    out.push(...got.serials.map((s) => s.serial));
  }
  return out;
}

let moves = 0;
/** A partner's report of `serials`, in lists of at most {@link chunk}: every one moves. */
async function report(key: string, action: SerialAction, serials: readonly string[]): Promise<void> {
  for (const list of slices(serials, chunk)) {
    const r = await mint.moveSerials(
      { brandId: brand.brandId, action, target: { case: 'serials', value: { serials: list } }, idempotencyKey: `move-${++moves}` },
      withKey(key),
    );
    expect(r.move).toMatchObject({ status: 'done', moved: list.length, refused: 0 });
  }
}

async function mintAs(key: string, level: string, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const got = await mint.mintContainers(
      { brandId: brand.brandId, level, count: Math.min(chunk, count - out.length), extensionDigit: 3, idempotencyKey: `${level}-${i}` },
      withKey(key),
    );
    out.push(...got.ssccs);
  }
  return out;
}

describe(`the lifecycle scenario, partners and aggregation, at ${n} units`, () => {
  it(
    `allocates ${allocatedCount}, packs ${commissionedCount} units into ${caseCount} cases and ${palletCount} pallets, decommissions one pallet; every serial equals its oracle`,
    slow,
    async () => {
      expect(palletCount).toBeGreaterThanOrEqual(2);
      const { mintBatchId: batch } = await mintCompleted(app.ctx, brand, n, { activationMode: 'first_scan' });
      const serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batch])).map(
        (r) => r.serial,
      );
      await mint.setContainerSettings({ brandId: brand.brandId, gs1CompanyPrefix: '0614141', maxDepth: 2 }, asBrand());
      const keyA = await grant('Contract manufacturer A', batch, allocatedCount);

      step('minted');
      // A requests its 60 %, reports encoded, scrapped and commissioned units, and returns the rest.
      const aSerials = await allocate(keyA, allocatedCount, 'a');
      expect(new Set(aSerials).size).toBe(allocatedCount);
      const encoded = aSerials.slice(0, encodedCount);
      const scrapped = encoded.slice(0, scrappedCount);
      const commissioned = encoded.slice(scrappedCount, scrappedCount + commissionedCount);
      const unused = aSerials.slice(encodedCount);
      await report(keyA, SerialAction.ENCODE, encoded);
      await report(keyA, SerialAction.SCRAP, scrapped);
      await report(keyA, SerialAction.COMMISSION, commissioned);

      step('allocated and reported');
      // A mints its cases and pallets, and its packaging line reports the packing as EPCIS capture
      // documents of up to 1,000 AggregationEvents: cases of 10 units, then pallets of 50 cases.
      const cases = await mintAs(keyA, 'case', caseCount);
      const pallets = await mintAs(keyA, 'pallet', palletCount);
      step('containers minted');
      const epcOf = new Map(
        (
          await query<{ serial: string; epc: string }>(
            app.db.em.fork(),
            `select u.serial, regexp_replace(b.resolver_base_url, '/$', '') || '/01/' || b.gtin || '/21/' || u.serial as epc
            from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ?`,
            [batch],
          )
        ).map((r) => [r.serial, r.epc]),
      );
      const base = epcOf.get(serials[0]!)!.replace(/\/01\/.*$/, '');
      const containerEpc = (sscc: string) => `${base}/00/${sscc}`;
      const packing = (parent: string, children: readonly string[]) => ({
        type: 'AggregationEvent',
        eventID: `urn:uuid:${randomUUID()}`,
        eventTime: new Date().toISOString(),
        eventTimeZoneOffset: '+00:00',
        parentID: containerEpc(parent),
        childEPCs: children,
        action: 'ADD',
        bizStep: 'packing',
      });
      const caseEvents = cases.map((sscc, c) =>
        packing(
          sscc,
          commissioned.slice(c * perCase, (c + 1) * perCase).map((s) => epcOf.get(s)!),
        ),
      );
      const palletEvents = pallets.map((sscc, p) => packing(sscc, cases.slice(p * casesPerPallet, (p + 1) * casesPerPallet).map(containerEpc)));
      for (const list of [...slices(caseEvents, perDocument), ...slices(palletEvents, perDocument)]) {
        const answer = await capture(keyA, list);
        const children = list.reduce((sum, e) => sum + e.childEPCs.length, 0);
        expect(answer).toEqual({ status: 200, body: { ok: true, captured: list.length, replayed: 0, moved: children } });
      }
      step('packed');
      await report(keyA, SerialAction.RETURN, unused);

      step('returned');
      // The brand decommissions one pallet as stolen: its 50 cases and 500 units, nothing else.
      const stolenPallet = 1;
      const stolenCases = new Set(cases.slice(stolenPallet * casesPerPallet, (stolenPallet + 1) * casesPerPallet));
      const stolen = commissioned.slice(stolenPallet * perPallet, (stolenPallet + 1) * perPallet);
      const move = await mint.moveSerials(
        {
          brandId: brand.brandId,
          action: SerialAction.DECOMMISSION,
          reason: DecommissionReason.STOLEN,
          target: { case: 'container', value: pallets[stolenPallet]! },
          idempotencyKey: 'brand-stolen-pallet',
        },
        asBrand(),
      );
      expect(move.move).toMatchObject({ status: 'done', total: perPallet, moved: perPallet, refused: 0 });
      const containerStates = await query<{ sscc: string; level: string; state: string }>(
        app.db.em.fork(),
        `select sscc, level, state || coalesce(':' || reason, '') as state from containers where brand_id = ?`,
        [brand.brandId],
      );
      expect(containerStates).toHaveLength(caseCount + palletCount);
      const decommissioned = containerStates.filter((c) => c.state !== 'commissioned');
      expect(
        decommissioned
          .filter((c) => c.level === 'case')
          .map((c) => c.sscc)
          .sort(),
      ).toEqual([...stolenCases].sort());
      expect(decommissioned.filter((c) => c.level === 'pallet').map((c) => c.sscc)).toEqual([pallets[stolenPallet]]);
      expect(new Set(decommissioned.map((c) => c.state))).toEqual(new Set(['decommissioned:stolen']));

      step('pallet decommissioned');
      // A returned serial is never allocated again: B takes every serial left, and then nothing.
      const keyB = await grant('Packaging line B', batch, n);
      const left = n - allocatedCount;
      const bSerials = await allocate(keyB, left, 'b');
      const aSet = new Set(aSerials);
      expect(bSerials.filter((s) => aSet.has(s))).toEqual([]);
      const none = await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 1, idempotencyKey: 'b-more' }, withKey(keyB)));
      expect(none.code).toBe(Code.FailedPrecondition);
      expect(none.rawMessage).toContain('only 0 unallocated issued serials');
      // Nor can it be put back into circulation.
      const recommission = await mint.moveSerials(
        {
          brandId: brand.brandId,
          action: SerialAction.COMMISSION,
          target: { case: 'serials', value: { serials: unused.slice(0, 3) } },
          idempotencyKey: 'brand-recommission',
        },
        asBrand(),
      );
      expect(recommission.move).toMatchObject({ moved: 0, refused: 3 });
      expect(recommission.move!.refusals.map((r) => r.state)).toEqual([SerialState.RETURNED, SerialState.RETURNED, SerialState.RETURNED]);

      step('B allocated');
      // The oracle: every serial's state and partner from the inputs alone.
      const expected = new Map<string, string>();
      for (const s of serials) expected.set(s, 'issued/B');
      for (const s of encoded) expected.set(s, 'encoded/A');
      for (const s of scrapped) expected.set(s, 'scrapped/A');
      for (const s of commissioned) expected.set(s, 'commissioned/A');
      for (const s of stolen) expected.set(s, 'decommissioned:stolen/A');
      for (const s of unused) expected.set(s, 'returned/A');
      const actual = await query<{ serial: string; state: string }>(
        app.db.em.fork(),
        `
      select u.serial, coalesce(s.state || coalesce(':' || s.reason, ''), case when u.status = 'active' then 'commissioned' else 'issued' end)
        || '/' || case when p.name is null then '-' when p.name = 'Contract manufacturer A' then 'A' when p.name = 'Packaging line B' then 'B' else 'other' end as state
      from mint_units u
      left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
      left join unit_allocations a on a.brand_id = u.brand_id and a.mint_batch_id = u.mint_batch_id and a.seq = u.seq
      left join partners p on p.brand_id = a.brand_id and p.id = a.partner_id
      where u.mint_batch_id = ? order by u.seq`,
        [batch],
      );
      expect(actual).toHaveLength(n);
      expect(actual.filter((r) => r.state !== expected.get(r.serial)).slice(0, 10)).toEqual([]);
      expect([...expected.values()].filter((s) => s.startsWith('decommissioned'))).toHaveLength(perPallet);
      expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(commissionedCount - perPallet);
      // Every packed unit is in the case the oracle says.
      const packed = await query<{ serial: string; sscc: string }>(
        app.db.em.fork(),
        `
      select u.serial, c.sscc from unit_containers uc
      join mint_units u on u.brand_id = uc.brand_id and u.mint_batch_id = uc.mint_batch_id and u.seq = uc.seq
      join containers c on c.brand_id = uc.brand_id and c.id = uc.container_id where uc.brand_id = ?`,
        [brand.brandId],
      );
      expect(packed).toHaveLength(commissionedCount);
      const caseOf = new Map(commissioned.map((s, i) => [s, cases[Math.floor(i / perCase)]]));
      expect(packed.filter((r) => caseOf.get(r.serial) !== r.sscc)).toEqual([]);

      step('oracle checked');
      // The reconciliation adds up, per state, per partner and per reason.
      const r = await mint.getMintBatchReconciliation({ brandId: brand.brandId, mintBatchId: batch }, asBrand());
      const counts = (list: readonly { name: string; count: number }[]) => Object.fromEntries(list.filter((x) => x.count > 0).map((x) => [x.name, x.count]));
      const stillEncoded = encodedCount - scrappedCount - commissionedCount;
      expect(r).toMatchObject({ requested: n, minted: n, notMinted: 0, balanced: true, problems: [] });
      expect(counts(r.byState)).toEqual({
        issued: left,
        encoded: stillEncoded,
        scrapped: scrappedCount,
        commissioned: commissionedCount - perPallet,
        decommissioned: perPallet,
        returned: unused.length,
      });
      expect(counts(r.byReason)).toEqual({ stolen: perPallet });
      const byName = Object.fromEntries(
        r.byPartner.map((p) => [p.partnerName, { allocated: p.allocated, states: counts(p.byState), reasons: counts(p.byReason) }]),
      );
      expect(byName).toEqual({
        'Contract manufacturer A': {
          allocated: allocatedCount,
          reasons: { stolen: perPallet },
          states: {
            encoded: stillEncoded,
            scrapped: scrappedCount,
            commissioned: commissionedCount - perPallet,
            decommissioned: perPallet,
            returned: unused.length,
          },
        },
        'Packaging line B': { allocated: left, reasons: {}, states: { issued: left } },
      });
      expect(r.byPartner.reduce((sum, p) => sum + p.allocated, 0)).toBe(n);

      // Every EPCIS event validates; none aggregates an EPC that was not commissioned before it.
      const events = await storedEpcisEvents(app.db.em.fork(), brand.brandId);
      const validate = epcisValidator();
      expect(
        validate(
          epcisDocument(
            events.map((e) => e.body),
            new Date(),
          ),
        ),
        JSON.stringify(validate.errors?.slice(0, 3)),
      ).toBe(true);
      const aggregations = events.filter((e) => e.event_type === 'AggregationEvent');
      expect(aggregations.filter((e) => e.biz_step === 'packing')).toHaveLength(caseCount + palletCount);
      const commissionedEpcs = new Set<string>();
      const lacking: string[] = [];
      for (const e of events) {
        if (e.biz_step === 'commissioning') for (const epc of e.body['epcList'] as string[]) commissionedEpcs.add(epc);
        if (e.event_type === 'AggregationEvent')
          lacking.push(...[String(e.body['parentID']), ...(e.body['childEPCs'] as string[])].filter((epc) => !commissionedEpcs.has(epc)));
      }
      expect(lacking).toEqual([]);
      // The stolen pallet's decommissioning names its 500 units and its 51 containers.
      const decommissioning = events.filter((e) => e.biz_step === 'decommissioning' && e.body['disposition'] === 'stolen');
      expect(decommissioning.reduce((sum, e) => sum + (e.body['epcList'] as string[]).length, 0)).toBe(perPallet + casesPerPallet + 1);
    },
  );
});
