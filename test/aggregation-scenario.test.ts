// The aggregation scenario at CI size: mint N units, commission all but a few, mint cases
// and pallets with SSCCs under the brand's GS1 company prefix, pack the commissioned units into
// cases of 10 and the cases into pallets of 5, then decommission one pallet as stolen with one
// MoveSerials on its SSCC. Exactly that pallet's cases and units must be decommissioned and every
// other unit and container unchanged (checked against an oracle computed from the inputs); every
// EPCIS event must validate against the EPCIS 2.0 JSON Schema and no aggregated EPC may lack an
// earlier commissioning. Around it: the packing rules (not commissioned, already packed, cycle,
// depth), a concurrent pack race, re-packing, a captured document with one invalid event, another
// brand's container, and what the public and the brand see of a container.
// CI size: N = 1,000 (AGGREGATION_UNITS); `npm run test:aggregation:full` runs N = 100,000.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  captureEpcisDocument,
  epcisDocument,
  getContainer,
  mintContainers,
  moveSerials,
  packContainer,
  queryEpcis,
  resolveContainer,
  setContainerSettings,
  unpackContainer,
  type MoveSerialsInput,
} from '@mint/usecases';
import { isSscc } from '@mint/domain';
import { storedEpcisEvents } from './support/epcis.ts';
import { epcisValidator, mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

const n = Number(process.env['AGGREGATION_UNITS'] ?? 1_000);
/** Time allowed to each step at full size. */
const slow = { timeout: 900_000 };
const perCase = 10;
const casesPerPallet = 5;
/** Units left issued (never commissioned): the last ones of the batch. */
const uncommissioned = 20;
const packed = Math.floor((n - uncommissioned) / (perCase * casesPerPallet)) * perCase * casesPerPallet;
const caseCount = packed / perCase;
const palletCount = caseCount / casesPerPallet;

let app: UseCaseBundle;
let brand: SeededBrand;
let other: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  other = await app.seedBrand();
});
afterAll(() => app?.close());

const actor = () => ({ id: brand.userId });
let keys = 0;
const key = () => `agg-${++keys}`;
const move = (input: Omit<MoveSerialsInput, 'brandId' | 'idempotencyKey'>) =>
  moveSerials(app.ctx, actor(), { brandId: brand.brandId, idempotencyKey: key(), ...input }, { runAll: true });
const pack = (sscc: string, serials: readonly string[], ssccs: readonly string[] = []) =>
  packContainer(app.ctx, actor(), { brandId: brand.brandId, sscc, serials, ssccs, idempotencyKey: key() });

let batch: string;
let serials: string[];
let cases: string[];
let pallets: string[];

/** Each unit's state (with its reason) by seq. */
async function unitStates(): Promise<Map<number, string>> {
  const found = await query<{ seq: number; state: string }>(
    app.db.em.fork(),
    `
    select u.seq, coalesce(s.state || coalesce(':' || s.reason, ''), case when u.status = 'active' then 'commissioned' else 'issued' end) as state
    from mint_units u left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
    where u.mint_batch_id = ? order by u.seq`,
    [batch],
  );
  return new Map(found.map((r) => [r.seq, r.state]));
}

/** Each container's state (with its reason) by SSCC. */
async function containerStates(brandId = brand.brandId): Promise<Map<string, string>> {
  const found = await query<{ sscc: string; state: string }>(
    app.db.em.fork(),
    `select sscc, state || coalesce(':' || reason, '') as state from containers where brand_id = ? order by sscc`,
    [brandId],
  );
  return new Map(found.map((r) => [r.sscc, r.state]));
}

async function epcisRows(): Promise<{ body: Record<string, unknown>; event_type: string; biz_step: string }[]> {
  return storedEpcisEvents(app.db.em.fork(), brand.brandId);
}

describe(`the aggregation scenario at ${n} units`, () => {
  it("mints SSCCs only under the brand's GS1 company prefix, never the same one twice, idempotently", slow, async () => {
    await expect(
      mintContainers(app.ctx, actor(), { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: key() }),
    ).rejects.toThrow(/no GS1 company prefix/);
    await expect(setContainerSettings(app.ctx, actor(), { brandId: brand.brandId, companyPrefix: '12a', maxDepth: null })).rejects.toThrow(
      /gs1_company_prefix/,
    );
    expect(await setContainerSettings(app.ctx, actor(), { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: 2 })).toEqual({
      companyPrefix: '0614141',
      maxDepth: 2,
    });
    await expect(setContainerSettings(app.ctx, { id: other.userId }, { brandId: other.brandId, companyPrefix: '0614141', maxDepth: null })).rejects.toThrow(
      /another brand/,
    );
    await setContainerSettings(app.ctx, { id: other.userId }, { brandId: other.brandId, companyPrefix: '7610425', maxDepth: null });

    const caseKey = key();
    const minted = await mintContainers(app.ctx, actor(), {
      brandId: brand.brandId,
      level: 'case',
      count: caseCount + 2,
      extensionDigit: 1,
      idempotencyKey: caseKey,
    });
    expect(minted.replayed).toBe(false);
    expect(minted.ssccs).toHaveLength(caseCount + 2);
    expect(minted.ssccs.every((s) => isSscc(s) && s.startsWith('10614141'))).toBe(true);
    const again = await mintContainers(app.ctx, actor(), {
      brandId: brand.brandId,
      level: 'case',
      count: caseCount + 2,
      extensionDigit: 1,
      idempotencyKey: caseKey,
    });
    expect(again).toEqual({ ...minted, replayed: true });
    await expect(
      mintContainers(app.ctx, actor(), { brandId: brand.brandId, level: 'case', count: 3, extensionDigit: 1, idempotencyKey: caseKey }),
    ).rejects.toThrow(/another mint/);
    const palletMint = await mintContainers(app.ctx, actor(), {
      brandId: brand.brandId,
      level: 'pallet',
      count: palletCount + 1,
      extensionDigit: 1,
      idempotencyKey: key(),
    });
    const all = [...minted.ssccs, ...palletMint.ssccs];
    expect(new Set(all.map((s) => s.slice(8, 17))).size).toBe(all.length);
    cases = minted.ssccs.slice(0, caseCount);
    pallets = palletMint.ssccs.slice(0, palletCount);
  });

  it("packs only commissioned units, each into one container, within the brand's depth; exactly one of two concurrent packs wins", slow, async () => {
    ({ mintBatchId: batch } = await mintCompleted(app.ctx, brand, n, { activationMode: 'first_scan' }));
    serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batch])).map(
      (r) => r.serial,
    );
    expect(await move({ action: 'encode', reason: null, target: { mintBatchId: batch, fromSeq: 1, toSeq: n } })).toMatchObject({ moved: n });
    expect(await move({ action: 'commission', reason: null, target: { mintBatchId: batch, fromSeq: 1, toSeq: n - uncommissioned } })).toMatchObject({
      moved: n - uncommissioned,
    });

    // Not commissioned: refused, naming the unit and its state, and nothing is packed.
    await expect(pack(cases[0]!, [serials[0]!, serials[n - 1]!])).rejects.toThrow(
      new RegExp(`serial ${serials[n - 1]} is not commissioned \\(it is encoded\\)`),
    );
    await expect(pack(cases[0]!, ['NOSUCHSERIAL'])).rejects.toThrow(/serials\[0\]/);

    for (let c = 0; c < caseCount; c++) {
      expect(await pack(cases[c]!, serials.slice(c * perCase, (c + 1) * perCase))).toMatchObject({ units: perCase, containers: 0, replayed: false });
    }
    for (let p = 0; p < palletCount; p++) {
      expect(await pack(pallets[p]!, [], cases.slice(p * casesPerPallet, (p + 1) * casesPerPallet))).toMatchObject({ units: 0, containers: casesPerPallet });
    }
    const packedRows = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from unit_containers where brand_id = ?', [brand.brandId]);
    expect(Number(packedRows[0]!.n)).toBe(packed);

    // A unit or container is in one container at a time; no cycles; no deeper than max_depth (2).
    const spare = await mintContainers(app.ctx, actor(), { brandId: brand.brandId, level: 'case', count: 3, extensionDigit: 0, idempotencyKey: key() });
    await expect(pack(spare.ssccs[0]!, [serials[0]!])).rejects.toThrow(/is in a container already/);
    await expect(pack(spare.ssccs[0]!, [], [cases[0]!])).rejects.toThrow(/is in a container already/);
    await expect(pack(cases[0]!, [], [pallets[0]!])).rejects.toThrow(/inside itself/);
    await expect(pack(spare.ssccs[0]!, [], [pallets[palletCount - 1]!])).rejects.toThrow(/deeper than the brand's max_depth \(2\)/);

    // Two concurrent packs of one unit into two containers: exactly one wins.
    const [free] = await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? and seq = ?', [batch, packed + 1]);
    const race = await Promise.allSettled([pack(spare.ssccs[1]!, [free!.serial]), pack(spare.ssccs[2]!, [free!.serial])]);
    expect(race.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const holders = await query<{ n: string }>(
      app.db.em.fork(),
      'select count(*) as n from unit_containers u join mint_units m on m.brand_id = u.brand_id and m.mint_batch_id = u.mint_batch_id and m.seq = u.seq where m.serial = ?',
      [free!.serial],
    );
    expect(Number(holders[0]!.n)).toBe(1);
    // Unpack it again (from whichever won) and re-pack it: it moves, it is never in two.
    const winner = race[0]!.status === 'fulfilled' ? spare.ssccs[1]! : spare.ssccs[2]!;
    const loser = winner === spare.ssccs[1] ? spare.ssccs[2]! : spare.ssccs[1]!;
    await expect(
      unpackContainer(app.ctx, actor(), { brandId: brand.brandId, sscc: loser, serials: [free!.serial], ssccs: [], idempotencyKey: key() }),
    ).rejects.toThrow(/is not in container/);
    expect(
      await unpackContainer(app.ctx, actor(), { brandId: brand.brandId, sscc: winner, serials: [free!.serial], ssccs: [], idempotencyKey: key() }),
    ).toMatchObject({ units: 1 });
    expect(await pack(loser, [free!.serial])).toMatchObject({ units: 1 });
  });

  it("decommissions exactly the stolen pallet's cases and units with one move on its SSCC; everything else is unchanged", slow, async () => {
    const beforeUnits = await unitStates();
    const beforeContainers = await containerStates();
    const stolen = pallets[1 % palletCount]!;
    const stolenCases = new Set(cases.slice((1 % palletCount) * casesPerPallet, ((1 % palletCount) + 1) * casesPerPallet));
    const stolenSeqs = new Set<number>();
    cases.forEach((c, i) => {
      if (stolenCases.has(c)) for (let k = 1; k <= perCase; k++) stolenSeqs.add(i * perCase + k);
    });

    const report = await move({ action: 'decommission', reason: 'stolen', target: { container: stolen } });
    expect(report).toMatchObject({ status: 'done', total: stolenSeqs.size, moved: stolenSeqs.size, refused: 0 });

    const afterUnits = await unitStates();
    const unitOracle = (seq: number) => (stolenSeqs.has(seq) ? 'decommissioned:stolen' : beforeUnits.get(seq));
    expect([...afterUnits].filter(([seq, state]) => state !== unitOracle(seq))).toEqual([]);
    const afterContainers = await containerStates();
    const containerOracle = (sscc: string) => (sscc === stolen || stolenCases.has(sscc) ? 'decommissioned:stolen' : beforeContainers.get(sscc));
    expect([...afterContainers].filter(([sscc, state]) => state !== containerOracle(sscc))).toEqual([]);
    expect([...afterContainers.values()].filter((s) => s.startsWith('decommissioned'))).toHaveLength(1 + casesPerPallet);

    // Again on the same pallet: every unit is refused per unit, naming its state.
    const repeat = await move({ action: 'decommission', reason: 'stolen', target: { container: stolen } });
    expect(repeat.moved).toBe(0);
    expect(repeat.refusals).toHaveLength(stolenSeqs.size);
    expect(new Set(repeat.refusals.map((r) => `${r.refusal} ${r.state}`))).toEqual(new Set(['wrong_state decommissioned']));
    // A decommissioned container takes nothing more.
    await expect(pack(stolen, [], [])).rejects.toThrow(/serials and ssccs/);
    const spare = await mintContainers(app.ctx, actor(), { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: key() });
    await expect(pack(stolen, [], [spare.ssccs[0]!])).rejects.toThrow(/which is decommissioned/);
  });

  it('writes EPCIS events that validate, and never aggregates an EPC not commissioned before', slow, async () => {
    const events = await epcisRows();
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
    expect(aggregations.filter((e) => e.biz_step === 'packing').length).toBeGreaterThanOrEqual(caseCount + palletCount);
    expect(aggregations.every((e) => String(e.body['parentID']).includes('/00/'))).toBe(true);
    const commissioned = new Set<string>();
    const lacking: string[] = [];
    for (const e of events) {
      if (e.biz_step === 'commissioning') for (const epc of e.body['epcList'] as string[]) commissioned.add(epc);
      if (e.event_type === 'AggregationEvent' && e.body['action'] === 'ADD') {
        lacking.push(...[String(e.body['parentID']), ...(e.body['childEPCs'] as string[])].filter((epc) => !commissioned.has(epc)));
      }
    }
    expect(lacking).toEqual([]);

    // The query interface filters aggregation events like the others.
    // Every page of EQ_bizStep=packing, by nextPageToken.
    let packingSeen = 0;
    let token: string | null = null;
    do {
      const page = await queryEpcis(
        app.ctx,
        brand.brandId,
        new URLSearchParams({ EQ_bizStep: 'packing', perPage: '1000', ...(token === null ? {} : { nextPageToken: token }) }),
      );
      const list = (page.document['epcisBody'] as { queryResults: { resultsBody: { eventList: Record<string, unknown>[] } } }).queryResults.resultsBody
        .eventList;
      expect(list.every((e) => e['type'] === 'AggregationEvent' && e['bizStep'] === 'packing')).toBe(true);
      packingSeen += list.length;
      token = page.nextPageToken;
    } while (token !== null);
    expect(packingSeen).toBe(aggregations.filter((e) => e.biz_step === 'packing').length);
    const palletUri = String(aggregations.find((e) => e.body['parentID'] !== undefined && String(e.body['parentID']).endsWith(pallets[0]!))!.body['parentID']);
    const byEpc = await queryEpcis(app.ctx, brand.brandId, new URLSearchParams({ MATCH_epc: palletUri }));
    const named = (byEpc.document['epcisBody'] as { queryResults: { resultsBody: { eventList: Record<string, unknown>[] } } }).queryResults.resultsBody
      .eventList;
    expect(named.map((e) => `${e['type']} ${e['bizStep']}`)).toEqual(['ObjectEvent commissioning', 'AggregationEvent packing']);
  });

  it(
    'captures packing all or nothing: a document with one invalid event changes nothing; a unit commissioned by the same document may be packed',
    slow,
    async () => {
      const spare = await mintContainers(app.ctx, actor(), { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: key() });
      const [unitRow] = await query<{ url: string; serial: string }>(
        app.db.em.fork(),
        `
      select b.resolver_base_url || '/01/' || b.gtin || '/21/' || u.serial as url, u.serial from mint_units u join mint_batches b on b.id = u.mint_batch_id
      where u.mint_batch_id = ? and u.seq = ?`,
        [batch, n],
      );
      const [baseRow] = await query<{ base: string }>(app.db.em.fork(), 'select resolver_base_url as base from brands where id = ?', [brand.brandId]);
      const caseUri = `${baseRow!.base}/00/${spare.ssccs[0]}`;
      const commission = {
        type: 'ObjectEvent',
        eventID: `urn:uuid:${randomUUID()}`,
        eventTime: new Date().toISOString(),
        eventTimeZoneOffset: '+00:00',
        epcList: [unitRow!.url],
        action: 'OBSERVE',
        bizStep: 'commissioning',
        disposition: 'active',
      };
      const packing = {
        type: 'AggregationEvent',
        eventID: `urn:uuid:${randomUUID()}`,
        eventTime: new Date(Date.now() + 1).toISOString(),
        eventTimeZoneOffset: '+00:00',
        parentID: caseUri,
        childEPCs: [unitRow!.url],
        action: 'ADD',
        bizStep: 'packing',
        disposition: 'in_progress',
      };
      // The invalid event: packs a unit already in a case.
      const [packedRow] = await query<{ url: string }>(
        app.db.em.fork(),
        `
      select b.resolver_base_url || '/01/' || b.gtin || '/21/' || u.serial as url from mint_units u join mint_batches b on b.id = u.mint_batch_id
      where u.mint_batch_id = ? and u.seq = 1`,
        [batch],
      );
      const bad = { ...packing, eventID: `urn:uuid:${randomUUID()}`, childEPCs: [packedRow!.url] };
      const validate = epcisValidator();
      const badDocument = epcisDocument([commission, packing, bad], new Date());
      expect(validate(badDocument), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
      const before = {
        events: (await epcisRows()).length,
        packed: await query(app.db.em.fork(), 'select * from unit_containers order by mint_batch_id, seq'),
        states: await unitStates(),
      };
      await expect(captureEpcisDocument(app.ctx, actor(), brand.brandId, badDocument)).rejects.toThrow(/eventList\[2\]|in a container already/);
      expect((await epcisRows()).length).toBe(before.events);
      expect(await query(app.db.em.fork(), 'select * from unit_containers order by mint_batch_id, seq')).toEqual(before.packed);
      expect(await unitStates()).toEqual(before.states);

      const good = epcisDocument([commission, packing], new Date());
      expect(await captureEpcisDocument(app.ctx, actor(), brand.brandId, good)).toMatchObject({ captured: 2, moved: 2 });
      expect(await captureEpcisDocument(app.ctx, actor(), brand.brandId, good)).toMatchObject({ captured: 0, replayed: 2 });
      const seen = await getContainer(app.ctx, brand.brandId, spare.ssccs[0]!, { limit: null, cursor: null });
      expect(seen.contents.units.map((u) => u.serial)).toEqual([unitRow!.serial]);
    },
  );

  it("refuses another brand's container as unknown, on every operation", async () => {
    const theirs = await mintContainers(
      app.ctx,
      { id: other.userId },
      { brandId: other.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: key() },
    );
    const sscc = theirs.ssccs[0]!;
    await expect(pack(sscc, [serials[packed + 2]!])).rejects.toThrow(/not found/);
    await expect(move({ action: 'decommission', reason: 'stolen', target: { container: sscc } })).rejects.toThrow(/not found/);
    await expect(getContainer(app.ctx, brand.brandId, sscc, { limit: null, cursor: null })).rejects.toThrow(/not found/);
    await expect(pack(cases[0]!, [], [sscc])).rejects.toThrow(/names no unit or container of this brand/);
    expect((await containerStates(other.brandId)).get(sscc)).toBe('commissioned');
  });

  it('tells the public that a container exists and its state, and the brand also what it holds, paged', async () => {
    const [slug] = await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId]);
    const pallet = pallets[0]!;
    const pub = await resolveContainer(app.ctx, slug!.slug, pallet);
    expect(pub).toEqual({
      brandId: brand.brandId,
      brand: { name: 'Test Brand', slug: slug!.slug },
      sscc: pallet,
      level: 'pallet',
      state: 'commissioned',
      reason: null,
    });
    expect(Object.keys(pub!)).not.toContain('contents');
    expect(await resolveContainer(app.ctx, slug!.slug, '106141410000099999')).toBeNull();
    const [otherSlug] = await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [other.brandId]);
    expect(await resolveContainer(app.ctx, otherSlug!.slug, pallet)).toBeNull();

    const first = await getContainer(app.ctx, brand.brandId, pallet, { limit: 2, cursor: null });
    expect(first.container).toMatchObject({
      sscc: pallet,
      level: 'pallet',
      state: 'commissioned',
      parentSscc: null,
      containerCount: casesPerPallet,
      unitCount: 0,
    });
    const seen = [...first.contents.containers.map((c) => c.sscc)];
    let cursor = first.contents.nextCursor;
    while (cursor !== null) {
      const page = await getContainer(app.ctx, brand.brandId, pallet, { limit: 2, cursor });
      seen.push(...page.contents.containers.map((c) => c.sscc));
      cursor = page.contents.nextCursor;
    }
    expect(seen).toEqual(cases.slice(0, casesPerPallet));
    const aCase = await getContainer(app.ctx, brand.brandId, cases[0]!, { limit: 1000, cursor: null });
    expect(aCase.container.parentSscc).toBe(pallet);
    expect(aCase.contents.units.map((u) => u.serial)).toEqual(serials.slice(0, perCase));
  });
});
