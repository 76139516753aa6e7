// The lifecycle scenario as far as the service builds it (serial states, bulk moves,
// EPCIS, reconciliation; partner allocation and aggregation are not built yet): mint N units,
// encode 55 %, scrap 0.2 %, commission 54 %, return the 5 % of the first 60 % never encoded, and
// decommission 0.5 % as stolen by serial list. Every serial's state must equal an oracle computed
// from the inputs, active_tokens the commissioned count, the reconciliation must add up, every
// EPCIS event must validate against the EPCIS 2.0 JSON Schema, no decommissioned EPC may lack an
// earlier commissioning, and a returned serial can never be put into circulation.
// CI size: N = 10,000 (LIFECYCLE_UNITS); `npm run test:lifecycle:full` runs N = 100,000.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisDocument, getMintKpis, moveSerials, reconcileMintBatch, reconciliationCsv, type MoveSerialsInput } from '@mint/usecases';
import { epcisValidator, mintCompleted } from './support/pack-fixtures.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

const n = Number(process.env['LIFECYCLE_UNITS'] ?? 10_000);
let app: UseCaseBundle;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(() => app?.close());

let keys = 0;
const move = (input: Omit<MoveSerialsInput, 'brandId' | 'idempotencyKey'>) =>
  moveSerials(app.ctx, { id: brand.userId }, { brandId: brand.brandId, idempotencyKey: `scenario-${++keys}`, ...input }, { runAll: true });

describe(`the lifecycle scenario at ${n} units`, () => {
  it('ends with every serial in its oracle state, exact KPIs, a balanced reconciliation and valid EPCIS', { timeout: 900_000 }, async () => {
    const { mintBatchId: batch } = await mintCompleted(app.ctx, brand, n, { activationMode: 'first_scan' });
    const part = (share: number) => Math.round(n * share);
    const allocated = part(0.6);
    const encoded = part(0.55);
    const scrapped = part(0.002);
    const commissioned = part(0.54);
    const stolen = part(0.005);
    const range = (fromSeq: number, toSeq: number) => ({ mintBatchId: batch, fromSeq, toSeq });

    expect(await move({ action: 'encode', reason: null, target: range(1, encoded) })).toMatchObject({ moved: encoded, refused: 0 });
    expect(await move({ action: 'scrap', reason: null, target: range(1, scrapped) })).toMatchObject({ moved: scrapped, refused: 0 });
    expect(await move({ action: 'commission', reason: null, target: range(scrapped + 1, scrapped + commissioned) })).toMatchObject({
      moved: commissioned,
      refused: 0,
    });
    expect(await move({ action: 'return', reason: null, target: range(encoded + 1, allocated) })).toMatchObject({ moved: allocated - encoded, refused: 0 });
    const stolenSerials = (
      await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? and seq between ? and ? order by seq', [
        batch,
        scrapped + 1,
        scrapped + stolen,
      ])
    ).map((r) => r.serial);
    expect(await move({ action: 'decommission', reason: 'stolen', target: { serials: stolenSerials } })).toMatchObject({ moved: stolen, refused: 0 });

    // The oracle: each seq's state from the inputs alone.
    const oracle = (seq: number): string => {
      if (seq <= scrapped) return 'scrapped';
      if (seq <= scrapped + stolen) return 'decommissioned:stolen';
      if (seq <= scrapped + commissioned) return 'commissioned';
      if (seq <= encoded) return 'encoded';
      if (seq <= allocated) return 'returned';
      return 'issued';
    };
    const states = await query<{ seq: number; state: string }>(
      app.db.em.fork(),
      `
      select u.seq, coalesce(s.state || coalesce(':' || s.reason, ''), case when u.status = 'active' then 'commissioned' else 'issued' end) as state
      from mint_units u left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
      where u.mint_batch_id = ? order by u.seq`,
      [batch],
    );
    expect(states).toHaveLength(n);
    expect(states.filter((r) => r.state !== oracle(r.seq))).toEqual([]);

    const live = commissioned - stolen;
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(live);
    const report = await reconcileMintBatch(app.ctx, brand.brandId, batch);
    expect(report).toMatchObject({
      requested: n,
      minted: n,
      notMinted: 0,
      balanced: true,
      byReason: { stolen },
      byState: {
        issued: n - allocated,
        encoded: encoded - scrapped - commissioned,
        commissioned: live,
        scrapped,
        decommissioned: stolen,
        returned: allocated - encoded,
      },
    });
    expect(reconciliationCsv(report)).toContain(`state,commissioned,${live}\n`);

    // Every EPCIS event validates; no decommissioned EPC lacks an earlier commissioning.
    const events = await query<{ body: Record<string, unknown>; biz_step: string; event_time: Date }>(
      app.db.em.fork(),
      'select body, biz_step, event_time from epcis_events where brand_id = ? order by event_time, id',
      [brand.brandId],
    );
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
    const commissionedEpcs = new Set<string>();
    const uncommissioned: string[] = [];
    for (const e of events) {
      const epcs = e.body['epcList'] as string[];
      if (e.biz_step === 'commissioning') for (const epc of epcs) commissionedEpcs.add(epc);
      if (e.biz_step === 'decommissioning' && e.body['disposition'] !== 'returned') uncommissioned.push(...epcs.filter((epc) => !commissionedEpcs.has(epc)));
    }
    expect(uncommissioned).toEqual([]);
    expect(events.reduce((sum, e) => sum + (e.body['epcList'] as string[]).length, 0)).toBe(encoded + scrapped + commissioned + (allocated - encoded) + stolen);

    // A returned serial never comes back.
    const [returned] = await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? and seq = ?', [
      batch,
      allocated,
    ]);
    const again = await move({ action: 'commission', reason: null, target: { serials: [returned!.serial, stolenSerials[0]!] } });
    expect(again.refusals.map((r) => [r.refusal, r.state]).sort()).toEqual([
      ['wrong_state', 'decommissioned'],
      ['wrong_state', 'returned'],
    ]);
    const [count] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from mint_units where brand_id = ? and serial = ?', [
      brand.brandId,
      returned!.serial,
    ]);
    expect(Number(count!.n)).toBe(1);
  });
});
