// Units commissioned at mint (active_at_mint) are reported so: each chunk writes, in its own
// transaction, EPCIS 2.0 ObjectEvents (ADD, commissioning, active) naming its units, at most
// 10,000 EPCs an event, valid against the EPCIS 2.0 JSON Schema; such units pack without another
// commissioning, and the packing never names an EPC without an earlier commissioning.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisDocument, mintContainers, packContainer, setContainerSettings } from '@mint/usecases';
import { epcisValidator, mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { maxEventEpcs, mintCommissioningEvents } from '../src/lifecycle/epcis.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

type Stored = { id: string; biz_step: string; event_type: string; epcs: string[]; body: Record<string, unknown> };
const eventsOf = (brandId: string) => query<Stored>(app.db.em.fork(),
  'select id, biz_step, event_type, epcs, body from epcis_events where brand_id = ? order by event_time, record_time, id', [brandId]);
const unitEpcs = async (batchId: string) => (await query<{ epc: string }>(app.db.em.fork(), `
  select regexp_replace(b.resolver_base_url, '/$', '') || '/01/' || b.gtin || '/21/' || u.serial as epc
  from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ? order by u.seq`, [batchId])).map((r) => r.epc);

describe('commissioning at mint', () => {
  it('writes one commissioning ObjectEvent per chunk naming each unit once, valid EPCIS 2.0; a first_scan batch writes none', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 2_500, { activationMode: 'active_at_mint', chunk: 1_000 });
    const events = await eventsOf(brand.brandId);
    expect(new Set(events.map((e) => `${e.event_type} ${String(e.body['action'])} ${e.biz_step} ${String(e.body['disposition'])}`))).toEqual(new Set(['ObjectEvent ADD commissioning active']));
    // One event per chunk, as large as the chunk.
    const chunks = await query<{ count: number }>(app.db.em.fork(),
      `select (payload->>'count')::int as count from mint_events where entity_id = ? and event_type = 'mint_units_created'`, [mintBatchId]);
    expect(chunks.length).toBeGreaterThan(1);
    expect(events.map((e) => e.epcs.length).sort()).toEqual(chunks.map((c) => c.count).sort());
    const named = events.flatMap((e) => e.body['epcList'] as string[]);
    expect(named).toHaveLength(2_500);
    expect(new Set(named)).toEqual(new Set(await unitEpcs(mintBatchId)));
    expect(events.map((e) => e.body['eventID'])).toEqual(events.map((e) => `urn:uuid:${e.id}`));
    const validate = epcisValidator();
    expect(validate(epcisDocument(events.map((e) => e.body), new Date())), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);

    const other = await app.seedBrand();
    await mintCompleted(app.ctx, other, 50, { activationMode: 'first_scan' });
    expect(await eventsOf(other.brandId)).toEqual([]);
  });

  it('packs units commissioned at mint without another commissioning, after their commissioning event', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 30, { activationMode: 'active_at_mint' });
    const serials = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])).map((r) => r.serial);
    const actor = { id: brand.userId };
    await setContainerSettings(app.ctx, actor, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: 2 });
    const [sscc] = (await mintContainers(app.ctx, actor, { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: 'case' })).ssccs;
    const packed = await packContainer(app.ctx, actor, { brandId: brand.brandId, sscc: sscc!, serials: serials.slice(0, 10), ssccs: [], idempotencyKey: 'pack' });
    expect(packed.units).toBe(10);
    const commissioned = new Set<string>();
    const lacking: string[] = [];
    const events = await eventsOf(brand.brandId);
    for (const e of events) {
      if (e.biz_step === 'commissioning') for (const epc of e.body['epcList'] as string[]) commissioned.add(epc);
      if (e.event_type === 'AggregationEvent') lacking.push(...[String(e.body['parentID']), ...(e.body['childEPCs'] as string[])].filter((epc) => !commissioned.has(epc)));
    }
    expect(events.filter((e) => e.event_type === 'AggregationEvent')).toHaveLength(1);
    expect(lacking).toEqual([]);
  });

  it(`splits a chunk over events of at most ${maxEventEpcs} EPCs, with ids the same for the same chunk`, () => {
    const input = {
      brandId: '00000000-0000-4000-8000-000000000001', mintBatchId: '00000000-0000-4000-8000-000000000002', resolverBaseUrl: 'https://id.example.com/b/',
      gtin: '09506000134352', firstSeq: 40_001, serials: Array.from({ length: 20_000 + 7 }, (_, i) => `S${i}`), at: new Date('2026-11-28T10:00:00Z'),
    };
    const events = mintCommissioningEvents(input);
    expect(events.map((e) => e.epcs.length)).toEqual([10_000, 10_000, 7]);
    expect(events[0]!.epcs[0]).toBe('https://id.example.com/b/01/09506000134352/21/S0');
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    expect(mintCommissioningEvents(input).map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(mintCommissioningEvents({ ...input, firstSeq: 1 }).map((e) => e.id)).not.toContain(events[0]!.id);
  });
});
