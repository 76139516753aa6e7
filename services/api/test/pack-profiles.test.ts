// CreatePayloadPack and ListPayloadPacks over Connect (in process, behind the whole interceptor
// chain): the codes a client sees for bad input, a voided or unminted batch and a read-only role,
// and the pack's profile on the wire.

import { Code } from '@connectrpc/connect';
import { PackFormat, Paper, PayloadPackPurpose, PayloadPackStatus, Symbology } from '@mint/contract';
import { createUser, grantRole, issueAccessToken, setMintBatchStatus, submitMintRequest } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, codeOf, errorOf, inProcessApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});
afterAll(async () => {
  await app.close();
});

const packCount = async () => Number((await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from payload_packs'))[0]!.n);

describe('CreatePayloadPack', () => {
  it('answers the pack pending with its formats, range, symbology and layout, and ListPayloadPacks shows the same', async () => {
    const { mint } = inProcessApi(app);
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 100);
    const created = await mint.createPayloadPack(
      {
        brandId: brand.brandId,
        mintBatchId,
        formats: [PackFormat.EPCIS, PackFormat.CSV],
        seqFrom: 11,
        seqTo: 60,
        symbology: Symbology.DATAMATRIX,
        layout: { paper: Paper.LETTER, rows: 7, dpi: 300 },
      },
      bearer(brand.token),
    );
    expect(created.ok).toBe(true);
    expect(created.pack).toMatchObject({
      mintBatchId,
      status: PayloadPackStatus.PENDING,
      formats: [PackFormat.CSV, PackFormat.EPCIS],
      seqFrom: 11,
      seqTo: 60,
      symbology: Symbology.DATAMATRIX,
      purpose: PayloadPackPurpose.REQUEST,
      layout: { paper: Paper.LETTER, columns: 3, rows: 7, labelWidthMm: 70, labelHeightMm: 37, dpi: 300 },
    });
    expect(created.pack?.storagePath).toBeUndefined();
    const listed = await mint.listPayloadPacks({ brandId: brand.brandId }, bearer(brand.token));
    const byId = new Map(listed.packs.map((k) => [k.id, k]));
    expect(byId.get(created.pack!.id)).toMatchObject({ formats: [PackFormat.CSV, PackFormat.EPCIS], seqFrom: 11, seqTo: 60 });
    const completion = listed.packs.find((k) => k.mintBatchId === mintBatchId && k.purpose === PayloadPackPurpose.COMPLETION);
    expect(completion?.formats).toEqual([PackFormat.CSV, PackFormat.JSONL, PackFormat.EPCIS]);
    expect([completion?.seqFrom, completion?.seqTo]).toEqual([undefined, undefined]);
  });

  it('is InvalidArgument naming the field for bad input, FailedPrecondition for a voided or unminted batch, PermissionDenied for a viewer; nothing is written', async () => {
    const { mint } = inProcessApi(app);
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 20);
    const voided = await mintCompleted(app.ctx, brand, 3);
    await setMintBatchStatus(app.ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId: voided.mintBatchId, status: 'voided', reason: null });
    const draft = await submitMintRequest(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        productId: brand.productId,
        productBatchId: null,
        requestedQuantity: 5,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: null,
      },
    );
    if (!draft.ok) throw new Error('blocked');
    const viewer = await createUser(app.ctx, { email: `viewer-${Date.now()}@test.example`, name: 'Viewer' });
    await grantRole(app.ctx, brand.brandId, viewer.id, 'viewer');
    const before = await packCount();
    const call = (fields: Record<string, unknown>, token = brand.token) =>
      mint.createPayloadPack({ brandId: brand.brandId, mintBatchId, formats: [PackFormat.CSV], ...fields }, bearer(token));

    for (const [fields, field] of [
      [{ formats: [] }, 'formats'],
      [{ formats: [99 as PackFormat] }, 'formats'],
      [{ seqFrom: 5, seqTo: 21 }, 'seq_to'],
      [{ layout: { columns: 4 } }, 'layout.columns'],
      [{ layout: { labelHeightMm: 300 } }, 'layout.label_height_mm'],
      [{ formats: [PackFormat.PDF], layout: { rows: 9 } }, 'layout.rows'],
    ] as const) {
      const error = await errorOf(call(fields));
      expect([error.code, error.rawMessage], JSON.stringify(fields)).toEqual([Code.InvalidArgument, expect.stringContaining(field)]);
    }
    expect(await codeOf(call({ mintBatchId: voided.mintBatchId }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(call({ mintBatchId: draft.mintBatchId }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(call({}, await issueAccessToken(app.ctx, viewer.id)))).toBe(Code.PermissionDenied);
    expect(await packCount()).toBe(before);
  });
});
