// Partner allocation (OPEN-SCS request/return) as the scenario without aggregation, through
// the API's whole interceptor chain with real partner keys (x-api-key): mint N units; allocate
// 60 % to partner A and 10 % to partner B at the same time; A encodes 55 %, scraps 0.2 % and
// commissions 54 %, and returns its unused 5 %; B cannot touch A's serials (refused per unit); the
// brand decommissions some of A's units; a returned serial is never allocated again; quotas and
// restrictions are enforced with clear errors. Then every serial's state and partner equal an
// oracle computed from the inputs, the reconciliation adds up per partner (CSV checked, PDF read
// back by pdf.js), and every EPCIS event validates against the EPCIS 2.0 JSON Schema.
// CI size: N = 10,000 (PARTNER_UNITS).

import { Code, createClient, type Client } from '@connectrpc/connect';
import { DecommissionReason, DocumentFormat, type MintService, PartnerService, SerialAction } from '@mint/contract';
import { epcisDocument, getMintKpis } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPdf } from '../packages/labels/test/decoders.ts';
import { bearer, errorOf, inProcessApi } from '../services/api/test/support.ts';
import { epcisValidator, mintCompleted } from './support/pack-fixtures.ts';
import { query, run } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

const n = Number(process.env['PARTNER_UNITS'] ?? 10_000);
const part = (share: number) => Math.round(n * share);
let app: UseCaseBundle;
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
  brand = await app.seedBrand();
});
afterAll(() => app?.close());

/** Serials of a batch by seq (index 0 is seq 1). */
async function serialsOf(batchId: string): Promise<string[]> {
  return (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batchId])).map(
    (r) => r.serial,
  );
}

async function grant(name: string, restriction: { case: 'productId' | 'mintBatchId'; value: string }, quota: number): Promise<string> {
  const { partnerId } = await partners.createPartner({ brandId: brand.brandId, name }, asBrand());
  const granted = await partners.grantPartnerKey({ brandId: brand.brandId, partnerId, name: `${name} line 1`, restriction, quota }, asBrand());
  expect(granted.apiKey).toMatch(/^mk_/);
  return granted.apiKey;
}

let keys = 0;
const report = (key: string, action: SerialAction, serials: readonly string[]) =>
  mint.moveSerials(
    { brandId: brand.brandId, action, target: { case: 'serials', value: { serials: [...serials] } }, idempotencyKey: `report-${++keys}` },
    withKey(key),
  );

describe(`partner allocation at ${n} units`, () => {
  it('allocates, reports and returns per partner, never issues a serial twice, and reconciles every serial', { timeout: 900_000 }, async () => {
    const { mintBatchId: batch } = await mintCompleted(app.ctx, brand, n, { activationMode: 'first_scan' });
    const { mintBatchId: otherBatch } = await mintCompleted(app.ctx, brand, 100, { activationMode: 'first_scan' });
    const serials = await serialsOf(batch);
    const aQuota = part(0.6);
    const bFirst = part(0.1);
    // A draws from the product (any of its batches, oldest first), B from the big batch only.
    const keyA = await grant('Contract manufacturer A', { case: 'productId', value: brand.productId }, aQuota);
    const keyB = await grant('Packaging line B', { case: 'mintBatchId', value: batch }, n);

    // Both request at once: exactly what each asked, and no serial twice.
    const [a, b] = await Promise.all([
      partners.allocateSerials({ brandId: brand.brandId, quantity: aQuota, idempotencyKey: 'a-1' }, withKey(keyA)),
      partners.allocateSerials({ brandId: brand.brandId, quantity: bFirst, idempotencyKey: 'b-1' }, withKey(keyB)),
    ]);
    expect(a.serials).toHaveLength(aQuota);
    expect(b.serials).toHaveLength(bFirst);
    expect(a.quotaLeft).toBe(0);
    const aSerials = a.serials.map((s) => s.serial);
    const bSerials = b.serials.map((s) => s.serial);
    expect(new Set([...aSerials, ...bSerials]).size).toBe(aQuota + bFirst);
    expect(a.serials.every((s) => s.mintBatchId === batch && s.url.endsWith(`/21/${s.serial}`))).toBe(true);
    // A repeat of the key answers the same serials and allocates nothing.
    const replay = await partners.allocateSerials({ brandId: brand.brandId, quantity: aQuota, idempotencyKey: 'a-1' }, withKey(keyA));
    expect(replay).toMatchObject({ replayed: true, requestId: a.requestId });
    expect(replay.serials.map((s) => s.serial)).toEqual(aSerials);

    // The quota: A has none left; nothing is allocated by a refused request.
    const overQuota = await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 1, idempotencyKey: 'a-2' }, withKey(keyA)));
    expect(overQuota.code).toBe(Code.FailedPrecondition);
    expect(overQuota.rawMessage).toContain(`exceeds the key's remaining quota of 0 (quota ${aQuota}, ${aQuota} allocated)`);
    // Bad input names its field.
    const tooMany = await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 10_001, idempotencyKey: 'a-3' }, withKey(keyA)));
    expect(tooMany.code).toBe(Code.InvalidArgument);
    expect(tooMany.rawMessage).toContain('quantity');

    // A reports: encodes 55 %, scraps 0.2 % of them, commissions 54 %, returns what it never encoded.
    const encoded = aSerials.slice(0, part(0.55));
    const scrapped = encoded.slice(0, part(0.002));
    const commissioned = encoded.slice(part(0.002), part(0.002) + part(0.54));
    const unused = aSerials.slice(part(0.55));
    expect((await report(keyA, SerialAction.ENCODE, encoded)).move).toMatchObject({ moved: encoded.length, refused: 0 });
    expect((await report(keyA, SerialAction.SCRAP, scrapped)).move).toMatchObject({ moved: scrapped.length, refused: 0 });
    expect((await report(keyA, SerialAction.COMMISSION, commissioned)).move).toMatchObject({ moved: commissioned.length, refused: 0 });
    const returned = await report(keyA, SerialAction.RETURN, unused);
    expect(returned.move).toMatchObject({ moved: unused.length, refused: 0 });

    // B cannot touch A's serials: each is refused as not in its allocation; its own move.
    const foreign = [...commissioned.slice(0, 5), ...unused.slice(0, 5)];
    const bEncoded = bSerials.slice(0, 3);
    const attempt = await report(keyB, SerialAction.SCRAP, [...foreign, ...bEncoded]);
    expect(attempt.move).toMatchObject({ moved: 3, refused: foreign.length });
    expect(attempt.move!.refusals.map((r) => [r.serial, r.refusal])).toEqual(foreign.map((s) => [s, 'not_allocated']));
    const single = await errorOf(report(keyB, SerialAction.ENCODE, [commissioned[0]!]));
    expect(single.code).toBe(Code.NotFound);
    expect(single.rawMessage).toContain("is not in this partner's allocation");
    // B cannot read A's moves, decommission, or call what is not marked for partners.
    expect((await errorOf(mint.getSerialMove({ brandId: brand.brandId, moveId: returned.move!.moveId }, withKey(keyB)))).code).toBe(Code.NotFound);
    const decommission = await errorOf(
      mint.moveSerials(
        {
          brandId: brand.brandId,
          action: SerialAction.DECOMMISSION,
          reason: DecommissionReason.STOLEN,
          target: { case: 'serials', value: { serials: bSerials.slice(3, 4) } },
          idempotencyKey: 'b-decommission',
        },
        withKey(keyB),
      ),
    );
    expect(decommission.code).toBe(Code.PermissionDenied);
    expect(decommission.rawMessage).toContain('a partner key may encode, commission, scrap, return');
    const kpis = await errorOf(mint.getMintKpis({ brandId: brand.brandId }, withKey(keyB)));
    expect(kpis.code).toBe(Code.PermissionDenied);
    expect(kpis.rawMessage).toContain('a partner key may only request, report, pack and return');
    expect((await errorOf(partners.listPartners({ brandId: brand.brandId }, withKey(keyB)))).code).toBe(Code.PermissionDenied);
    // A brand's session cannot allocate: allocation is a partner key's request.
    expect((await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 1, idempotencyKey: 'brand-1' }, asBrand()))).code).toBe(
      Code.PermissionDenied,
    );

    // The brand keeps doing everything: it decommissions some of A's commissioned units as stolen.
    const stolen = commissioned.slice(0, part(0.005));
    expect(
      (
        await mint.moveSerials(
          {
            brandId: brand.brandId,
            action: SerialAction.DECOMMISSION,
            reason: DecommissionReason.STOLEN,
            target: { case: 'serials', value: { serials: stolen } },
            idempotencyKey: 'brand-stolen',
          },
          asBrand(),
        )
      ).move,
    ).toMatchObject({ moved: stolen.length, refused: 0 });

    // B takes every serial never allocated; the returned ones are never allocated again, to anyone.
    const left = n - aQuota - bFirst;
    const b2 = await partners.allocateSerials({ brandId: brand.brandId, quantity: left, idempotencyKey: 'b-2' }, withKey(keyB));
    expect(b2.serials).toHaveLength(left);
    const b2Serials = b2.serials.map((s) => s.serial);
    expect(b2Serials.filter((s) => aSerials.includes(s) || bSerials.includes(s))).toEqual([]);
    const none = await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 1, idempotencyKey: 'b-3' }, withKey(keyB)));
    expect(none.code).toBe(Code.FailedPrecondition);
    expect(none.rawMessage).toBe(`only 0 unallocated issued serials of mint batch ${batch} are available; 1 requested, none allocated`);

    // The restriction: C may draw from the other batch only, and gets all or nothing.
    const keyC = await grant('Packaging line C', { case: 'mintBatchId', value: otherBatch }, 1000);
    const short = await errorOf(partners.allocateSerials({ brandId: brand.brandId, quantity: 101, idempotencyKey: 'c-1' }, withKey(keyC)));
    expect(short.rawMessage).toContain(`only 100 unallocated issued serials of mint batch ${otherBatch} are available; 101 requested`);
    const c = await partners.allocateSerials({ brandId: brand.brandId, quantity: 100, idempotencyKey: 'c-2' }, withKey(keyC));
    expect(new Set(c.serials.map((s) => s.mintBatchId))).toEqual(new Set([otherBatch]));
    expect(await partners.getPartnerAllocation({ brandId: brand.brandId }, withKey(keyC))).toMatchObject({
      quota: 1000,
      allocated: 100,
      mintBatchId: otherBatch,
    });

    // The oracle: every serial's state and partner from the inputs alone.
    const expected = new Map<string, string>();
    for (const s of serials) expected.set(s, 'issued/-');
    for (const s of aSerials) expected.set(s, 'issued/A');
    for (const s of encoded) expected.set(s, 'encoded/A');
    for (const s of scrapped) expected.set(s, 'scrapped/A');
    for (const s of commissioned) expected.set(s, 'commissioned/A');
    for (const s of stolen) expected.set(s, 'decommissioned:stolen/A');
    for (const s of unused) expected.set(s, 'returned/A');
    for (const s of [...bSerials, ...b2Serials]) expected.set(s, 'issued/B');
    for (const s of bEncoded) expected.set(s, 'scrapped/B');
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
    expect(actual.filter((r) => r.state !== expected.get(r.serial))).toEqual([]);
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(commissioned.length - stolen.length);

    // The reconciliation adds up per partner, state and reason.
    const r = await mint.getMintBatchReconciliation({ brandId: brand.brandId, mintBatchId: batch }, asBrand());
    const counts = (list: readonly { name: string; count: number }[]) => Object.fromEntries(list.filter((x) => x.count > 0).map((x) => [x.name, x.count]));
    expect(r).toMatchObject({ requested: n, minted: n, notMinted: 0, balanced: true, problems: [] });
    expect(counts(r.byState)).toEqual({
      encoded: encoded.length - scrapped.length - commissioned.length,
      commissioned: commissioned.length - stolen.length,
      scrapped: scrapped.length + bEncoded.length,
      decommissioned: stolen.length,
      returned: unused.length,
      issued: bFirst + left - bEncoded.length,
    });
    const byName = Object.fromEntries(
      r.byPartner.map((p) => [p.partnerName, { allocated: p.allocated, states: counts(p.byState), reasons: counts(p.byReason) }]),
    );
    expect(byName).toEqual({
      'Contract manufacturer A': {
        allocated: aQuota,
        reasons: { stolen: stolen.length },
        states: {
          encoded: encoded.length - scrapped.length - commissioned.length,
          scrapped: scrapped.length,
          commissioned: commissioned.length - stolen.length,
          decommissioned: stolen.length,
          returned: unused.length,
        },
      },
      'Packaging line B': { allocated: bFirst + left, reasons: {}, states: { issued: bFirst + left - bEncoded.length, scrapped: bEncoded.length } },
    });
    expect(r.byPartner.reduce((sum, p) => sum + p.allocated, 0) + r.unallocatedByState.reduce((sum, x) => sum + x.count, 0)).toBe(n);

    // The document of serialisation: CSV rows and a PDF an independent reader opens.
    const csv = new TextDecoder().decode(
      (await mint.getMintBatchReconciliationDocument({ brandId: brand.brandId, mintBatchId: batch, format: DocumentFormat.CSV }, asBrand())).content,
    );
    const partnerA = r.byPartner.find((p) => p.partnerName === 'Contract manufacturer A')!.partnerId;
    expect(csv.split('\n')[0]).toBe('category,name,count');
    expect(csv).toContain(`batch,requested,${n}\n`);
    expect(csv).toContain(`partner:${partnerA},name,Contract manufacturer A\npartner:${partnerA},allocated,${aQuota}\n`);
    expect(csv).toContain(`partner:${partnerA},state:returned,${unused.length}\n`);
    expect(csv).toContain(`partner:${partnerA},reason:stolen,${stolen.length}\n`);
    expect(csv).toContain('check,balanced,yes\n');
    const pdfDoc = await mint.getMintBatchReconciliationDocument({ brandId: brand.brandId, mintBatchId: batch, format: DocumentFormat.PDF }, asBrand());
    expect(pdfDoc).toMatchObject({ contentType: 'application/pdf', fileName: `serialisation-${batch}.pdf` });
    const pdf = await openPdf(pdfDoc.content);
    const text = (await Promise.all(Array.from({ length: pdf.pages }, (_, i) => pdf.text(i + 1)))).flat();
    expect(text).toContain('Document of serialisation');
    expect(text).toContain(`Mint batch ${batch}`);
    expect(text).toContain('Contract manufacturer A');
    expect(text).toContain(String(unused.length));
    expect(text).toContain(`Balanced: every one of the ${n} requested serials is accounted for.`);

    // A serial listed nowhere is an error: a lifecycle row without its unit unbalances the batch.
    await run(
      app.db.em.fork(),
      `insert into unit_states (brand_id, mint_batch_id, seq, state, reason, move_id, changed_at)
      values (?, ?, ?, 'encoded', null, gen_random_uuid(), now())`,
      [brand.brandId, batch, n + 1],
    );
    const broken = await mint.getMintBatchReconciliation({ brandId: brand.brandId, mintBatchId: batch }, asBrand());
    expect(broken.balanced).toBe(false);
    expect(broken.problems).toEqual(['1 lifecycle states name a serial the batch does not hold']);
    await run(app.db.em.fork(), 'delete from unit_states where mint_batch_id = ? and seq = ?', [batch, n + 1]);

    // Every EPCIS event validates; A's allocation is one reserving event naming its EPCs, the partner its destination.
    const events = await query<{ body: Record<string, unknown>; biz_step: string }>(
      app.db.em.fork(),
      'select body, biz_step from epcis_events where brand_id = ? order by event_time, id',
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
    const reserving = events.filter((e) => e.biz_step === 'reserving');
    expect(reserving.map((e) => (e.body['epcList'] as string[]).length).sort((x, y) => x - y)).toEqual([bFirst, 100, aQuota, left].sort((x, y) => x - y));
    const aEvent = reserving.find((e) => (e.body['epcList'] as string[]).length === aQuota)!;
    expect(aEvent.body).toMatchObject({
      action: 'ADD',
      disposition: 'reserved',
      destinationList: [{ type: 'possessing_party', destination: `urn:uuid:${partnerA}` }],
    });
    expect((aEvent.body['epcList'] as string[]).map((epc) => epc.split('/21/')[1])).toEqual(aSerials);

    // A revoked partner key stops at once; its serials stay the partner's.
    const listed = await partners.listPartners({ brandId: brand.brandId }, asBrand());
    const keyBId = listed.partners.find((p) => p.name === 'Packaging line B')!.keys[0]!.keyId;
    await partners.revokePartnerKey({ brandId: brand.brandId, keyId: keyBId }, asBrand());
    expect((await errorOf(partners.getPartnerAllocation({ brandId: brand.brandId }, withKey(keyB)))).code).toBe(Code.Unauthenticated);
    expect((await partners.listPartners({ brandId: brand.brandId }, asBrand())).partners.find((p) => p.name === 'Packaging line B')!.keys[0]).toMatchObject({
      allocated: bFirst + left,
      quota: n,
    });
  });
});
