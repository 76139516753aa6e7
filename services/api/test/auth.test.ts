// Every MintService and CatalogService RPC needs a bearer token of a user whose role on the
// request's brand grants the RPC's permission; health stays public. The RPCs run in process
// through the interceptor chain; the HTTP status of a refusal is checked on the real server.

import { randomUUID } from 'node:crypto';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import { ActivationMode, type CatalogService, CommercialStatus, IdentityMode, MintReadinessStatus, type MintService } from '@mint/contract';
import type { Role } from '@mint/domain';
import { createUser, grantRole, issueAccessToken } from '@mint/usecases';
import { beforeAll, describe, expect, it } from 'vitest';
import { useUseCases, type SeededBrand } from '../../../test/support/usecases.ts';
import { bearer, codeOf, inProcessApi, postJson, startTestApi } from './support.ts';

const { app, brand } = useUseCases();
let other: SeededBrand;
let batchId: string;
let jobId: string;
let mint: Client<typeof MintService>;
let catalog: Client<typeof CatalogService>;

/** A new user with `role` on the test brand (or none) and their token. */
async function userWith(role: Role | null): Promise<string> {
  const user = await createUser(app.ctx, { email: `${randomUUID()}@test.example`, name: 'Someone' });
  if (role !== null) await grantRole(app.ctx, brand.brandId, user.id, role);
  return issueAccessToken(app.ctx, user.id);
}

beforeAll(async () => {
  ({ mint, catalog } = inProcessApi(app));
  other = await app.seedBrand();
  const submitted = await mint.submitMintRequest(
    {
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: 3,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
    },
    bearer(brand.token),
  );
  batchId = submitted.mintBatchId!;
  jobId = submitted.mintJobId!;
});

describe('authentication', () => {
  it('refuses a call without a token: HTTP 401, code unauthenticated', async () => {
    const api = await startTestApi(app);
    try {
      const res = await postJson(api, '/mint.v1.MintService/GetMintBatch', { brand_id: brand.brandId, mint_batch_id: batchId });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('bearer token') });
    } finally {
      await api.close();
    }
  });

  it('refuses another scheme, a forged token and an expired token', async () => {
    const forged = brand.token.slice(0, -4) + (brand.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const expired = await issueAccessToken(app.ctx, brand.userId, -120);
    for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${forged}`, `Bearer ${expired}`, 'Bearer']) {
      const error = await mint
        .getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, { headers: { authorization } })
        .catch((e: unknown) => ConnectError.from(e));
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.Unauthenticated);
      expect((error as ConnectError).message).not.toContain(forged);
    }
    const error = await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, bearer(expired)).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).rawMessage).toBe('access token expired');
  });

  it('checks the token before the request body: an anonymous invalid request is Unauthenticated', async () => {
    expect(await codeOf(mint.submitMintRequest({ brandId: 'not-a-uuid', requestedQuantity: 0 }))).toBe(Code.Unauthenticated);
  });

  it('applies to streaming RPCs too', async () => {
    const watch = async () => {
      for await (const _ of mint.watchMintJob({ brandId: brand.brandId, mintJobId: jobId })) void _;
    };
    expect(await codeOf(watch())).toBe(Code.Unauthenticated);
  });
});

describe('authorization on the brand', () => {
  it('a valid token of a user without a role on the brand is PermissionDenied, for reads and writes', async () => {
    const stranger = await userWith(null);
    expect(await codeOf(mint.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, bearer(stranger)))).toBe(Code.PermissionDenied);
    expect(
      await codeOf(
        mint.submitMintRequest(
          {
            brandId: brand.brandId,
            productId: brand.productId,
            requestedQuantity: 1,
            identityMode: IdentityMode.SERIAL,
            activationMode: ActivationMode.ACTIVE_AT_MINT,
          },
          bearer(stranger),
        ),
      ),
    ).toBe(Code.PermissionDenied);
    const watch = async () => {
      for await (const _ of mint.watchMintJob({ brandId: brand.brandId, mintJobId: jobId }, bearer(stranger))) void _;
    };
    expect(await codeOf(watch())).toBe(Code.PermissionDenied);
  });

  it("another brand's owner cannot read this brand, even naming it explicitly", async () => {
    const error = await mint.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, bearer(other.token)).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.PermissionDenied);
    // Asking under their own brand finds nothing: the batch is not theirs.
    expect(await codeOf(mint.getMintBatch({ brandId: other.brandId, mintBatchId: batchId }, bearer(other.token)))).toBe(Code.NotFound);
  });

  it('a viewer reads but cannot mint or change products', async () => {
    const viewer = await userWith('viewer');
    expect(await codeOf(mint.getMintBatch({ brandId: brand.brandId, mintBatchId: batchId }, bearer(viewer)))).toBe('ok');
    expect(await codeOf(mint.listMintBatches({ brandId: brand.brandId }, bearer(viewer)))).toBe('ok');
    expect(await codeOf(catalog.getProduct({ brandId: brand.brandId, productId: brand.productId }, bearer(viewer)))).toBe('ok');
    const denied = await mint
      .submitMintRequest(
        {
          brandId: brand.brandId,
          productId: brand.productId,
          requestedQuantity: 1,
          identityMode: IdentityMode.SERIAL,
          activationMode: ActivationMode.ACTIVE_AT_MINT,
        },
        bearer(viewer),
      )
      .catch((e: unknown) => ConnectError.from(e));
    expect((denied as ConnectError).code).toBe(Code.PermissionDenied);
    expect((denied as ConnectError).rawMessage).toContain('mint:write');
    expect(
      await codeOf(
        catalog.upsertProduct(
          { brandId: brand.brandId, sku: 'X', name: 'X', commercialStatus: CommercialStatus.ACTIVE, mintReadinessStatus: MintReadinessStatus.READY },
          bearer(viewer),
        ),
      ),
    ).toBe(Code.PermissionDenied);
  });

  it('a member maintains products but cannot run processing cycles; an admin can', async () => {
    const member = await userWith('member');
    expect(
      await codeOf(
        catalog.upsertProduct(
          {
            brandId: brand.brandId,
            sku: 'MEMBER-1',
            name: 'Member product',
            commercialStatus: CommercialStatus.DRAFT,
            mintReadinessStatus: MintReadinessStatus.NOT_READY,
          },
          bearer(member),
        ),
      ),
    ).toBe('ok');
    expect(await codeOf(mint.processMintJobBatch({ brandId: brand.brandId, jobId }, bearer(member)))).toBe(Code.PermissionDenied);
    const admin = await userWith('admin');
    expect(await codeOf(mint.processMintJobBatch({ brandId: brand.brandId, jobId }, bearer(admin)))).toBe('ok');
  });
});
