// Manual activation (ActivateMintUnits) commissions units, so it reports them so: in its own
// transaction it writes GS1 EPCIS 2.0 ObjectEvents (commissioning, active; ADD for issued units,
// OBSERVE for units encoded before) naming each activated unit exactly once, valid against the
// EPCIS 2.0 JSON Schema; a repeat writes nothing, and packing units activated this way never names
// an EPC without an earlier commissioning.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activateMintUnits, epcisDocument, mintContainers, moveSerials, packContainer, setContainerSettings } from '@mint/usecases';
import { epcisValidator, mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query, storedOrDerivedUnitId } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const actorOf = (brand: SeededBrand) => ({ id: brand.userId });
type Stored = { id: string; biz_step: string; event_type: string; body: Record<string, unknown> };
const eventsOf = (brandId: string) =>
  query<Stored>(app.db.em.fork(), 'select id, biz_step, event_type, body from epcis_events where brand_id = ? order by event_time, record_time, id', [brandId]);
const unitsOf = (batchId: string) =>
  query<{ id: string; serial: string; epc: string }>(
    app.db.em.fork(),
    `
  select ${storedOrDerivedUnitId('u')} as id, u.serial, regexp_replace(b.resolver_base_url, '/$', '') || '/01/' || b.gtin || '/21/' || u.serial as epc
  from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ? order by u.seq`,
    [batchId],
  );
/** EPCs named by commissioning events, per EPCIS action. */
const commissionedBy = (events: readonly Stored[], action: string) =>
  events
    .filter((e) => e.biz_step === 'commissioning' && e.body['action'] === action)
    .flatMap((e) => e.body['epcList'] as string[])
    .sort();

describe('manual activation', () => {
  it('writes one commissioning per activated unit (ADD issued, OBSERVE encoded), by ids and by batch, valid EPCIS 2.0; a repeat writes nothing', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 40, { activationMode: 'first_scan' });
    const units = await unitsOf(mintBatchId);
    await moveSerials(app.ctx, actorOf(brand), {
      brandId: brand.brandId,
      idempotencyKey: 'encode',
      action: 'encode',
      reason: null,
      target: { serials: units.slice(0, 4).map((u) => u.serial) },
    });
    await moveSerials(app.ctx, actorOf(brand), {
      brandId: brand.brandId,
      idempotencyKey: 'scrap',
      action: 'scrap',
      reason: null,
      target: { serials: [units[39]!.serial] },
    });
    const before = (await eventsOf(brand.brandId)).length;
    // By ids: two encoded units and eight issued ones.
    const byIds = units.slice(2, 12).map((u) => u.id);
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: byIds })).toEqual({ activatedCount: 10 });
    let events = (await eventsOf(brand.brandId)).slice(before);
    expect(commissionedBy(events, 'OBSERVE')).toEqual(
      units
        .slice(2, 4)
        .map((u) => u.epc)
        .sort(),
    );
    expect(commissionedBy(events, 'ADD')).toEqual(
      units
        .slice(4, 12)
        .map((u) => u.epc)
        .sort(),
    );
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, unitIds: byIds })).toEqual({ activatedCount: 0 });
    expect((await eventsOf(brand.brandId)).slice(before)).toEqual(events);
    // By batch: the rest but the scrapped unit, which activation never commissions.
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId })).toEqual({ activatedCount: 29 });
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId })).toEqual({ activatedCount: 0 });
    events = (await eventsOf(brand.brandId)).slice(before);
    expect(events.every((e) => e.event_type === 'ObjectEvent' && e.biz_step === 'commissioning' && e.body['disposition'] === 'active')).toBe(true);
    expect(commissionedBy(events, 'OBSERVE')).toEqual(
      units
        .slice(0, 4)
        .map((u) => u.epc)
        .sort(),
    );
    expect(commissionedBy(events, 'ADD')).toEqual(
      units
        .slice(4, 39)
        .map((u) => u.epc)
        .sort(),
    );
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
  });

  it('packs units activated manually after their commissioning event', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 20, { activationMode: 'first_scan' });
    const units = await unitsOf(mintBatchId);
    const actor = actorOf(brand);
    await activateMintUnits(app.ctx, actor, { brandId: brand.brandId, unitIds: units.slice(0, 5).map((u) => u.id) });
    await activateMintUnits(app.ctx, actor, { brandId: brand.brandId, mintBatchId });
    await setContainerSettings(app.ctx, actor, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: 2 });
    const [sscc] = (await mintContainers(app.ctx, actor, { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: 'case' })).ssccs;
    const packed = await packContainer(app.ctx, actor, {
      brandId: brand.brandId,
      sscc: sscc!,
      serials: units.slice(0, 10).map((u) => u.serial),
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
});
