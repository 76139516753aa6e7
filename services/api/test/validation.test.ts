// Bad input is refused with InvalidArgument naming the field, by the contract's buf.validate rules
// (before any handler runs) and by the domain rules behind them; missing rows are NotFound. The
// RPCs run in process through the interceptor chain; the HTTP status is checked on the real server.

import { randomUUID } from 'node:crypto';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type Client } from '@connectrpc/connect';
import { ViolationsSchema } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';
import { ActivationMode, IdentityMode, type MintService } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { bearer, errorOf, inProcessApi, postJson, startTestApi, submitOverJson } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let mint: Client<typeof MintService>;
const options = () => bearer(brand.token);

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  ({ mint } = inProcessApi(app));
});

afterAll(async () => {
  await app?.close();
});

const submit = (patch: Record<string, unknown>) => ({
  brandId: brand.brandId,
  productId: brand.productId,
  requestedQuantity: 10,
  identityMode: IdentityMode.SERIAL,
  activationMode: ActivationMode.ACTIVE_AT_MINT,
  ...patch,
});

describe('contract rules (protovalidate)', () => {
  it('requested_quantity 0 is InvalidArgument naming the field and the limit, with a Violations detail', async () => {
    const error = await errorOf(mint.submitMintRequest(submit({ requestedQuantity: 0 }), options()));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe('requested_quantity: must be greater than 0 and less than or equal to 1000000');
    const [violations] = error.findDetails(ViolationsSchema);
    expect(violations?.violations.map((v) => v.ruleId)).toEqual(['int32.gt_lte']);
  });

  it('names every offending field at once, nested ones by their path', async () => {
    const error = await errorOf(
      mint.submitMintRequest(
        submit({ identityMode: IdentityMode.BATCH, requestedQuantity: 2_000_000, lots: [{ lotCode: 'L 1', qty: 0 }], idempotencyKey: 'nope' }),
        options(),
      ),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    for (const field of ['requested_quantity: ', 'lots[0].lot_code: ', 'lots[0].qty: ', 'idempotency_key: ']) {
      expect(error.rawMessage).toContain(field);
    }
  });

  it('over Connect JSON the answer is HTTP 400 with the field in the message', async () => {
    const api = await startTestApi(app);
    try {
      const res = await submitOverJson(api, brand, {
        requested_quantity: 5,
        identity_mode: 'IDENTITY_MODE_UNSPECIFIED',
        activation_mode: 'ACTIVATION_MODE_FIRST_SCAN',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('identity_mode: ') });
    } finally {
      await api.close();
    }
  });

  it('over Connect JSON a field the message does not have is refused by name, not ignored (a misspelt cursor would page forever)', async () => {
    const api = await startTestApi(app);
    try {
      const jobs = await app.db.em.fork().execute('select count(*)::int as n from mint_jobs');
      const res = await submitOverJson(api, brand, {
        requested_quantity: 5,
        identity_mode: 'IDENTITY_MODE_SERIAL',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
        quantity: 5,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('"quantity"') });
      const page = await postJson(
        api,
        '/mint.v1.MintService/ListMintBatches',
        { brand_id: brand.brandId, next_cursor: 'x' },
        { authorization: `Bearer ${brand.token}` },
      );
      expect(page.status).toBe(400);
      expect(await page.json()).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('"next_cursor"') });
      expect(await app.db.em.fork().execute('select count(*)::int as n from mint_jobs')).toEqual(jobs);
    } finally {
      await api.close();
    }
  });

  it('validates the request of a server-streaming RPC before it streams', async () => {
    const watch = async () => {
      for await (const _ of mint.watchMintJob({ brandId: brand.brandId, mintJobId: 'not-a-job' }, options())) void _;
    };
    const error = await errorOf(watch());
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain('mint_job_id: ');
  });

  it('refuses a brand_id that is not a uuid before looking up roles', async () => {
    const error = await errorOf(mint.listMintBatches({ brandId: 'brand-1' }, options()));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain('brand_id: ');
  });
});

describe('domain rules behind the handlers', () => {
  it('lots in serial mode are InvalidArgument naming lots, and nothing is created', async () => {
    const error = await errorOf(mint.submitMintRequest(submit({ lots: [{ lotCode: 'L1', qty: 10 }] }), options()));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe('lots: must not be provided in serial mode');
    const list = await mint.listMintBatches({ brandId: brand.brandId }, options());
    expect(list.batches).toHaveLength(0);
  });

  it('half a keyset cursor is InvalidArgument naming the missing half', async () => {
    const error = await errorOf(mint.listMintBatches({ brandId: brand.brandId, cursorCreatedAt: timestampFromDate(new Date()) }, options()));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe('cursor_id: is required together with cursor_created_at');
    const tampered = await errorOf(mint.listMintBatches({ brandId: brand.brandId, cursor: 'garbage' }, options()));
    expect(tampered.rawMessage).toBe('cursor: is not a cursor returned by this list');
  });

  it('a missing batch is NotFound', async () => {
    const error = await errorOf(mint.getMintBatch({ brandId: brand.brandId, mintBatchId: randomUUID() }, options()));
    expect(error.code).toBe(Code.NotFound);
  });

  it('processing a job of another brand is NotFound, never a peek at it', async () => {
    const other = await app.seedBrand();
    const submitted = await mint.submitMintRequest(
      { ...submit({}), brandId: other.brandId, productId: other.productId },
      { headers: { authorization: `Bearer ${other.token}` } },
    );
    const error = await errorOf(mint.processMintJobBatch({ brandId: brand.brandId, jobId: submitted.mintJobId! }, options()));
    expect(error.code).toBe(Code.NotFound);
  });
});
