// Connect JSON takes enum values as the spec and /v1 write them (`serial`, `active_at_mint`,
// `first_scan`, `csv`, `a4`), in any case, besides the proto names; a string that names no value
// is refused naming the field and listing the values. Unary and enveloped (gRPC-Web) bodies,
// compressed or not, repeated and nested fields alike.

import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useUseCases } from '../../../test/support/usecases.ts';
import { mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { postJson, startTestApi, submitOverJson, type TestApi } from './support.ts';

const { app, brand } = useUseCases();
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi(app);
});

afterAll(() => api?.close());

const auth = () => ({ authorization: `Bearer ${brand.token}` });

/** The batch a Connect JSON submit made, as GetMintBatch answers it in JSON. */
async function batchOf(res: Response): Promise<Record<string, unknown>> {
  expect(res.status).toBe(200);
  const { mint_batch_id } = (await res.json()) as { mint_batch_id: string };
  const read = await postJson(api, '/mint.v1.MintService/GetMintBatch', { brand_id: brand.brandId, mint_batch_id }, auth());
  return ((await read.json()) as { batch: Record<string, unknown> }).batch;
}

describe('Connect JSON enum values', () => {
  it("accepts the spec's lowercase values (serial, active_at_mint, first_scan) as the proto names", async () => {
    const live = await batchOf(await submitOverJson(api, brand, { requested_quantity: 3, identity_mode: 'serial', activation_mode: 'active_at_mint' }));
    expect(live).toMatchObject({ identity_mode: 'IDENTITY_MODE_SERIAL', activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT' });
    const manual = await batchOf(await submitOverJson(api, brand, { requested_quantity: 3, identity_mode: 'SERIAL', activation_mode: 'First_Scan' }));
    expect(manual).toMatchObject({ identity_mode: 'IDENTITY_MODE_SERIAL', activation_mode: 'ACTIVATION_MODE_FIRST_SCAN' });
    const lots = await batchOf(
      await submitOverJson(api, brand, {
        requested_quantity: 4,
        identity_mode: 'batch',
        activation_mode: 'first_scan',
        lots: [{ lot_code: 'L1', qty: 4 }],
      }),
    );
    expect(lots).toMatchObject({ identity_mode: 'IDENTITY_MODE_BATCH', activation_mode: 'ACTIVATION_MODE_FIRST_SCAN' });
  });

  it('refuses a value that names nothing with invalid_argument naming the field and listing the values', async () => {
    const res = await submitOverJson(api, brand, { requested_quantity: 3, identity_mode: 'seriel', activation_mode: 'active_at_mint' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_argument',
      message: 'invalid value for field identity_mode: "seriel" is not one of batch, serial (or IDENTITY_MODE_BATCH, IDENTITY_MODE_SERIAL)',
    });
  });

  it('respells a gzip-compressed body, and repeated and nested enum fields (CreatePayloadPack formats, symbology, layout.paper)', async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 10);
    const body = gzipSync(
      JSON.stringify({
        brand_id: brand.brandId,
        mint_batch_id: mintBatchId,
        formats: ['csv', 'PDF'],
        symbology: 'datamatrix',
        layout: { paper: 'A4' },
      }),
    );
    const res = await fetch(`${api.baseUrl}/mint.v1.MintService/CreatePayloadPack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...auth() },
      body,
    });
    expect(res.status).toBe(200);
    const { pack } = (await res.json()) as { pack: Record<string, unknown> };
    expect(pack).toMatchObject({
      formats: ['PACK_FORMAT_CSV', 'PACK_FORMAT_PDF'],
      symbology: 'SYMBOLOGY_DATAMATRIX',
      layout: expect.objectContaining({ paper: 'PAPER_A4' }),
    });
    const nested = await postJson(
      api,
      '/mint.v1.MintService/CreatePayloadPack',
      {
        brand_id: brand.brandId,
        mint_batch_id: mintBatchId,
        formats: ['csv', 'tiff'],
      },
      auth(),
    );
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as { message: string }).message).toBe(
      'invalid value for field formats[1]: "tiff" is not one of csv, jsonl, svg, pdf, zpl, epcis ' +
        '(or PACK_FORMAT_CSV, PACK_FORMAT_JSONL, PACK_FORMAT_SVG, PACK_FORMAT_PDF, PACK_FORMAT_ZPL, PACK_FORMAT_EPCIS)',
    );
  });

  it('respells enveloped gRPC-Web JSON messages too', async () => {
    const message = Buffer.from(
      JSON.stringify({
        brand_id: brand.brandId,
        product_id: brand.productId,
        requested_quantity: 2,
        identity_mode: 'serial',
        activation_mode: 'active_at_mint',
      }),
    );
    const head = Buffer.alloc(5);
    head.writeUInt32BE(message.byteLength, 1);
    const res = await fetch(`${api.baseUrl}/mint.v1.MintService/SubmitMintRequest`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+json', 'x-grpc-web': '1', ...auth() },
      body: Buffer.concat([head, message]),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('latin1') + [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\r\n');
    expect(text).toMatch(/grpc-status: ?0/);
    const answer = JSON.parse(bytes.subarray(5, 5 + bytes.readUInt32BE(1)).toString('utf8')) as { ok: boolean; mint_batch_id: string };
    expect(answer.ok).toBe(true);
  });
});
