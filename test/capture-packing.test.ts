// A packaging line's capture documents of many packing events (AggregationEvent ADD packing), which
// capture applies as one set (a few statements for the document) while every packing rule holds:
// a document of cases then pallets lands whole (every unit in its case, every case in its pallet,
// one stored event, request row and audit event per event) and is replayed when sent again; one
// refused event among many (a unit already packed, not commissioned or unknown, a nesting deeper
// than max_depth, also under a parent that is itself packed, an event dated before the units'
// last event) changes nothing and is named; of two documents packing one unit at once exactly one
// lands.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureEpcisDocument, epcisDocument, mintContainers, moveSerials, packContainer, setContainerSettings } from '@mint/usecases';
import { mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
/** The batch's units in seq order: serial and EPC (the URI the service's events name). */
let units: { serial: string; epc: string }[];
let cases: string[];
let pallets: string[];
let base: string;
/** Units 1 to `commissioned` are commissioned; the rest are issued. */
const commissioned = 380;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 400, { activationMode: 'first_scan' });
  units = await query<{ serial: string; epc: string }>(
    app.db.em.fork(),
    `select u.serial, regexp_replace(b.resolver_base_url, '/$', '') || '/01/' || b.gtin || '/21/' || u.serial as epc
    from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ? order by u.seq`,
    [mintBatchId],
  );
  base = units[0]!.epc.replace(/\/01\/.*$/, '');
  const actor = { id: brand.userId };
  for (const action of ['encode', 'commission'] as const) {
    await moveSerials(
      app.ctx,
      actor,
      { brandId: brand.brandId, action, reason: null, target: { mintBatchId, fromSeq: 1, toSeq: commissioned }, idempotencyKey: action },
      { runAll: true },
    );
  }
  await setContainerSettings(app.ctx, actor, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: 2 });
  const mint = async (level: string, count: number) =>
    (await mintContainers(app.ctx, actor, { brandId: brand.brandId, level, count, extensionDigit: 2, idempotencyKey: `${level}s` })).ssccs;
  cases = [...(await mint('case', 40))];
  pallets = [...(await mint('pallet', 10))];
});
afterAll(() => app?.close());

const actor = () => ({ id: brand.userId });
const uri = (sscc: string) => `${base}/00/${sscc}`;
const packing = (parent: string, children: readonly string[], eventTime = new Date()) => ({
  type: 'AggregationEvent',
  eventID: `urn:uuid:${randomUUID()}`,
  eventTime: eventTime.toISOString(),
  eventTimeZoneOffset: '+00:00',
  parentID: uri(parent),
  childEPCs: [...children],
  action: 'ADD',
  bizStep: 'packing',
});
const capture = (events: readonly Record<string, unknown>[]) => captureEpcisDocument(app.ctx, actor(), brand.brandId, epcisDocument([...events], new Date()));
/** Units `from` to `to` (seqs, inclusive) as EPCs. */
const epcs = (from: number, to: number) => units.slice(from - 1, to).map((u) => u.epc);

/** Everything capture writes, to compare before and after a refusal. */
async function snapshot() {
  const em = app.db.em.fork();
  return {
    packed: await query(em, 'select mint_batch_id, seq, container_id from unit_containers where brand_id = ? order by mint_batch_id, seq', [brand.brandId]),
    parents: await query(em, 'select sscc, parent_id from containers where brand_id = ? order by sscc', [brand.brandId]),
    events: await query(em, 'select id from epcis_events where brand_id = ? order by id', [brand.brandId]),
    ops: await query(em, 'select id from container_ops where brand_id = ? order by id', [brand.brandId]),
    audit: await query(em, `select id from mint_events where brand_id = ? and event_type = 'container_packed' order by id`, [brand.brandId]),
  };
}

describe('capture of many packing events in one document', () => {
  it('lands a document of 20 cases and then 4 pallets whole, one event, request row and audit event per event, and replays it', async () => {
    const caseEvents = Array.from({ length: 20 }, (_, c) => packing(cases[c]!, epcs(c * 10 + 1, c * 10 + 10)));
    const palletEvents = Array.from({ length: 4 }, (_, p) => packing(pallets[p]!, cases.slice(p * 5, p * 5 + 5).map(uri)));
    const document = [...caseEvents, ...palletEvents];
    expect(await capture(document)).toEqual({ captured: 24, replayed: 0, moved: 200 + 20 });
    const em = app.db.em.fork();
    const packed = await query<{ serial: string; sscc: string }>(
      em,
      `select u.serial, c.sscc from unit_containers uc join mint_units u on u.brand_id = uc.brand_id and u.mint_batch_id = uc.mint_batch_id and u.seq = uc.seq
      join containers c on c.brand_id = uc.brand_id and c.id = uc.container_id where uc.brand_id = ? order by u.seq`,
      [brand.brandId],
    );
    expect(packed).toEqual(units.slice(0, 200).map((u, i) => ({ serial: u.serial, sscc: cases[Math.floor(i / 10)] })));
    const nested = await query<{ sscc: string; parent: string | null }>(
      em,
      `select c.sscc, p.sscc as parent from containers c left join containers p on p.brand_id = c.brand_id and p.id = c.parent_id
      where c.brand_id = ? and c.level = 'case' order by c.sscc`,
      [brand.brandId],
    );
    expect(nested.filter((r) => r.parent !== null)).toEqual(cases.slice(0, 20).map((sscc, c) => ({ sscc, parent: pallets[Math.floor(c / 5)] })));
    const ids = document.map((e) => e.eventID.slice('urn:uuid:'.length));
    const stored = await query<{ id: string; epcs: string[]; partner_id: string | null }>(
      em,
      `select id, epcs, partner_id from epcis_events where brand_id = ? and biz_step = 'packing' order by id`,
      [brand.brandId],
    );
    expect(stored.map((e) => e.id).sort()).toEqual([...ids].sort());
    const first = stored.find((e) => e.id === ids[0])!;
    expect([...first.epcs].sort()).toEqual([uri(cases[0]!), ...epcs(1, 10)].sort());
    const ops = await query<{ idempotency_key: string; units: number; containers: number }>(
      em,
      'select idempotency_key, units, containers from container_ops where brand_id = ? order by idempotency_key',
      [brand.brandId],
    );
    expect(ops).toEqual(
      ids
        .map((id, i) => ({ idempotency_key: `epcis:${id}`, units: i < 20 ? 10 : 0, containers: i < 20 ? 0 : 5 }))
        .sort((a, b) => a.idempotency_key.localeCompare(b.idempotency_key)),
    );
    const [audit] = await query<{ n: string }>(em, `select count(*) as n from mint_events where brand_id = ? and event_type = 'container_packed'`, [
      brand.brandId,
    ]);
    expect(Number(audit!.n)).toBe(24);
    expect(await capture(document)).toEqual({ captured: 0, replayed: 24, moved: 0 });
  });

  it('changes nothing when one event among many is refused, and names it', async () => {
    const before = await snapshot();
    const good = (c: number) => packing(cases[c]!, epcs(c * 10 + 1, c * 10 + 10));
    const among = async (bad: Record<string, unknown>, error: RegExp) => {
      const document = [good(20), good(21), good(22), bad, good(24)];
      await expect(capture(document)).rejects.toThrow(error);
      expect(await snapshot()).toEqual(before);
    };
    // A unit packed by the first test.
    await among(
      packing(cases[23]!, [...epcs(231, 239), units[4]!.epc]),
      new RegExp(`cannot pack into container ${cases[23]}: serial ${units[4]!.serial} is in a container already`),
    );
    // A unit never commissioned.
    await among(packing(cases[23]!, epcs(385, 386)), new RegExp(`serial ${units[384]!.serial} is not commissioned \\(it is issued\\)`));
    // No unit of the brand.
    await among(packing(cases[23]!, [...epcs(231, 232), `${base}/01/09506000134352/21/NOSUCHSERIAL`]), /epcisBody\.eventList\[3\]\.childEPCs\[2\]/);
    // A pallet already holding cases packed into another.
    await among(
      packing(cases[23]!, [uri(cases[30]!), uri(pallets[0]!)]),
      new RegExp(`container ${pallets[0]} would nest containers deeper than the brand's max_depth \\(2\\)`),
    );
    // Dated after the units' mint but before their commissioning.
    const [commissioning] = await query<{ at: Date; minted: Date }>(
      app.db.em.fork(),
      `select max(e.event_time) as at, (select max(created_at) from mint_units where brand_id = ?) as minted
      from epcis_events e where e.brand_id = ? and e.epcs && array[?]::text[]`,
      [brand.brandId, brand.brandId, epcs(231, 240)],
    );
    const early = new Date(new Date(commissioning!.at).getTime() - 1);
    expect(early.getTime()).toBeGreaterThanOrEqual(new Date(commissioning!.minted).getTime());
    await among(packing(cases[23]!, epcs(231, 240), early), /epcisBody\.eventList\[3\]\.eventTime: .* is before the latest event recorded/);
  });

  it('keeps max_depth for containers packed into a parent that is itself inside a container', async () => {
    // Pallet 5 goes into pallet 6 (depth 2); packing a case into pallet 5 would make 3.
    await packContainer(app.ctx, actor(), { brandId: brand.brandId, sscc: pallets[6]!, serials: [], ssccs: [pallets[5]!], idempotencyKey: 'nest' });
    const before = await snapshot();
    const document = [packing(pallets[7]!, [uri(cases[31]!)]), packing(pallets[5]!, [uri(cases[32]!)]), packing(pallets[8]!, [uri(cases[33]!)])];
    await expect(capture(document)).rejects.toThrow(new RegExp(`container ${cases[32]} would nest containers deeper than the brand's max_depth \\(2\\)`));
    expect(await snapshot()).toEqual(before);
  });

  it('lands exactly one of two documents that pack the same unit at once', async () => {
    const shared = units[300]!.epc;
    const one = [packing(cases[34]!, [...epcs(291, 299), shared]), packing(cases[35]!, epcs(311, 320))];
    const two = [packing(cases[36]!, epcs(321, 330)), packing(cases[37]!, [shared, ...epcs(332, 340)])];
    const outcomes = await Promise.allSettled([capture(one), capture(two)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const [row] = await query<{ n: string }>(
      app.db.em.fork(),
      `select count(*) as n from unit_containers uc join mint_units u on u.brand_id = uc.brand_id and u.mint_batch_id = uc.mint_batch_id and u.seq = uc.seq
      where uc.brand_id = ? and u.seq between 291 and 340`,
      [brand.brandId],
    );
    // The document that landed packed its 20 units; the other none.
    expect(Number(row!.n)).toBe(20);
  });
});
