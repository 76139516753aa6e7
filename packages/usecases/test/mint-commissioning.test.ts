// Units commissioned at mint (active_at_mint) are reported so: each chunk writes, in its own
// transaction, EPCIS 2.0 ObjectEvents (ADD, commissioning, active) naming its units, at most
// 10,000 EPCs an event, valid against the EPCIS 2.0 JSON Schema; such units pack without another
// commissioning, and the packing never names an EPC without an earlier commissioning.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisDocument, mintContainers, packContainer, queryEpcis, setContainerSettings } from '@mint/usecases';
import { epcisValidator, mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { storedEpcisEvents } from '../../../test/support/epcis.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { maxEpcisPageRangeUnits, maxEventEpcs, mintCommissioningEvents } from '../src/lifecycle/epcis.ts';

const eventList = (document: Record<string, unknown>) =>
  (document['epcisBody'] as { queryResults: { resultsBody: { eventList: Record<string, unknown>[] } } }).queryResults.resultsBody.eventList;
const validate = (document: Record<string, unknown>) => {
  const v = epcisValidator();
  const ok = v(epcisDocument(eventList(document), new Date()));
  if (!ok) throw new Error(JSON.stringify(v.errors?.slice(0, 3)));
  return ok;
};

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const eventsOf = (brandId: string) => storedEpcisEvents(app.db.em.fork(), brandId);
const unitEpcs = async (batchId: string) =>
  (
    await query<{ epc: string }>(
      app.db.em.fork(),
      `
  select regexp_replace(b.resolver_base_url, '/$', '') || '/01/' || b.gtin || '/21/' || u.serial as epc
  from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ? order by u.seq`,
      [batchId],
    )
  ).map((r) => r.epc);

describe('commissioning at mint', () => {
  it('writes one commissioning ObjectEvent per chunk naming each unit once, valid EPCIS 2.0; a first_scan batch writes none', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 2_500, { activationMode: 'active_at_mint', chunk: 1_000 });
    const events = await eventsOf(brand.brandId);
    expect(new Set(events.map((e) => `${e.event_type} ${String(e.body['action'])} ${e.biz_step} ${String(e.body['disposition'])}`))).toEqual(
      new Set(['ObjectEvent ADD commissioning active']),
    );
    // One event per chunk, as large as the chunk.
    const chunks = await query<{ count: number }>(
      app.db.em.fork(),
      `select (payload->>'count')::int as count from mint_events where entity_id = ? and event_type = 'mint_units_created'`,
      [mintBatchId],
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(events.map((e) => (e.body['epcList'] as string[]).length).sort()).toEqual(chunks.map((c) => c.count).sort());
    // Stored as ranges of the batch: no EPC text per unit, neither for MATCH_epc nor in the body.
    expect(events.map((e) => e.unit_count).sort()).toEqual(chunks.map((c) => c.count).sort());
    expect(events.map((e) => [e.mint_batch_id, e.epcs.length])).toEqual(events.map(() => [mintBatchId, 0]));
    const stored = await query<{ epc_text: number; body_epcs: number }>(
      app.db.em.fork(),
      `select coalesce(sum(cardinality(epcs)), 0)::int as epc_text, count(*) filter (where jsonb_exists(body, 'epcList'))::int as body_epcs from epcis_events where brand_id = ?`,
      [brand.brandId],
    );
    expect(stored).toEqual([{ epc_text: 0, body_epcs: 0 }]);
    const named = events.flatMap((e) => e.body['epcList'] as string[]);
    expect(named).toHaveLength(2_500);
    expect(new Set(named)).toEqual(new Set(await unitEpcs(mintBatchId)));
    expect(events.map((e) => e.body['eventID'])).toEqual(events.map((e) => `urn:uuid:${e.id}`));
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

    const other = await app.seedBrand();
    await mintCompleted(app.ctx, other, 50, { activationMode: 'first_scan' });
    expect(await eventsOf(other.brandId)).toEqual([]);
  });

  it('packs units commissioned at mint without another commissioning, after their commissioning event', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 30, { activationMode: 'active_at_mint' });
    const serials = (
      await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])
    ).map((r) => r.serial);
    const actor = { id: brand.userId };
    await setContainerSettings(app.ctx, actor, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: 2 });
    const [sscc] = (await mintContainers(app.ctx, actor, { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: 'case' })).ssccs;
    const packed = await packContainer(app.ctx, actor, {
      brandId: brand.brandId,
      sscc: sscc!,
      serials: serials.slice(0, 10),
      ssccs: [],
      idempotencyKey: 'pack',
    });
    expect(packed.units).toBe(10);
    const commissioned = new Set<string>();
    const lacking: string[] = [];
    const events = await eventsOf(brand.brandId);
    for (const e of events) {
      if (e.biz_step === 'commissioning') for (const epc of e.body['epcList'] as string[]) commissioned.add(epc);
      if (e.event_type === 'AggregationEvent')
        lacking.push(...[String(e.body['parentID']), ...(e.body['childEPCs'] as string[])].filter((epc) => !commissioned.has(epc)));
    }
    expect(events.filter((e) => e.event_type === 'AggregationEvent')).toHaveLength(1);
    expect(lacking).toEqual([]);
  });

  it('answers the EPCIS query with the commissioning events listing their units, found by MATCH_epc on a unit, pages bounded', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 2_500, { activationMode: 'active_at_mint', chunk: 1_000 });
    const epcs = await unitEpcs(mintBatchId);
    const all = await queryEpcis(app.ctx, brand.brandId, new URLSearchParams());
    const listed = eventList(all.document);
    expect(listed.map((e) => e['epcList'])).toEqual((await eventsOf(brand.brandId)).map((e) => e.body['epcList']));
    expect(listed.flatMap((e) => e['epcList'] as string[])).toEqual(epcs);
    expect(validate(all.document)).toBe(true);

    // A unit of a later chunk: exactly its chunk's event, with all its units.
    const naming = (epc: string) => listed.filter((e) => (e['epcList'] as string[]).includes(epc)).map((e) => e['eventID']);
    const matched = eventList((await queryEpcis(app.ctx, brand.brandId, new URLSearchParams({ MATCH_epc: epcs[1_500]! }))).document);
    expect(matched).toHaveLength(1);
    expect(matched.map((e) => e['eventID'])).toEqual(naming(epcs[1_500]!));
    expect(matched[0]!['epcList']).toContain(epcs[1_500]);
    const two = eventList(
      (await queryEpcis(app.ctx, brand.brandId, new URLSearchParams({ MATCH_epc: `${epcs[0]!},${epcs[2_499]!}`, EQ_bizStep: 'commissioning' }))).document,
    );
    expect(two.map((e) => e['eventID'])).toEqual(listed.map((e) => e['eventID']).filter((id) => [...naming(epcs[0]!), ...naming(epcs[2_499]!)].includes(id)));
    expect(two).toHaveLength(2);
    // The same serial under another URI names no unit of the brand's events.
    expect(
      eventList((await queryEpcis(app.ctx, brand.brandId, new URLSearchParams({ MATCH_epc: epcs[0]!.replace('/01/', '/elsewhere/01/') }))).document),
    ).toEqual([]);
    const other = await app.seedBrand();
    expect(eventList((await queryEpcis(app.ctx, other.brandId, new URLSearchParams({ MATCH_epc: epcs[0]! }))).document)).toEqual([]);
  });

  it(`ends a page before its commissioning events would list more than ${maxEpcisPageRangeUnits} units`, async () => {
    const brand = await app.seedBrand();
    await mintCompleted(app.ctx, brand, 25_000, { activationMode: 'active_at_mint', chunk: 5_000 });
    const pages: number[][] = [];
    let token: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof queryEpcis>> = await queryEpcis(
        app.ctx,
        brand.brandId,
        new URLSearchParams(token === null ? {} : { nextPageToken: token }),
      );
      pages.push(eventList(page.document).map((e) => (e['epcList'] as string[]).length));
      token = page.nextPageToken;
    } while (token !== null);
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    expect(pages.length).toBeGreaterThan(1);
    expect(sum(pages.flat())).toBe(25_000);
    for (const [i, page] of pages.entries()) {
      expect(sum(page)).toBeLessThanOrEqual(maxEpcisPageRangeUnits);
      // Each page ends only when the next event would not fit.
      if (i + 1 < pages.length) expect(sum(page) + pages[i + 1]![0]!).toBeGreaterThan(maxEpcisPageRangeUnits);
    }
  });

  it(`splits a chunk over events of at most ${maxEventEpcs} units, with ids the same for the same chunk`, () => {
    const input = {
      brandId: '00000000-0000-4000-8000-000000000001',
      mintBatchId: '00000000-0000-4000-8000-000000000002',
      firstSeq: 40_001,
      count: 20_000 + 7,
      at: new Date('2026-11-28T10:00:00Z'),
    };
    const events = mintCommissioningEvents(input);
    expect(events.map((e) => e.units)).toEqual([
      { mintBatchId: input.mintBatchId, firstSeq: 40_001, count: 10_000 },
      { mintBatchId: input.mintBatchId, firstSeq: 50_001, count: 10_000 },
      { mintBatchId: input.mintBatchId, firstSeq: 60_001, count: 7 },
    ]);
    expect(events.map((e) => e.epcs.length)).toEqual([0, 0, 0]);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    expect(mintCommissioningEvents(input).map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(mintCommissioningEvents({ ...input, firstSeq: 1 }).map((e) => e.id)).not.toContain(events[0]!.id);
  });
});
