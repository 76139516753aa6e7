// `mintctl serials` against a running API (the real HTTP server, in process): it moves serials over
// MoveSerials and prints the counts and every refused unit with its state.

import { ActivationMode, IdentityMode } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serialsCommand } from '../services/cli/src/remote.ts';
import { bearer, inProcessApi, startTestApi, type TestApi } from '../services/api/test/support.ts';
import { query } from './support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from './support/usecases.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  brand = await app.seedBrand();
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

async function mintBatch(quantity: number): Promise<{ batchId: string; serials: string[] }> {
  const { mint } = inProcessApi(app);
  const as = () => bearer(brand.token);
  const submitted = await mint.submitMintRequest(
    {
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: quantity,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
    },
    as(),
  );
  for (let i = 0; i < 20; i++) if ((await mint.processMintJobBatch({ brandId: brand.brandId, jobId: submitted.mintJobId!, maxUnits: 1000 }, as())).done) break;
  const serials = (
    await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [submitted.mintBatchId])
  ).map((r) => r.serial);
  return { batchId: submitted.mintBatchId!, serials };
}

describe('mintctl serials', () => {
  it('mintctl serials moves a batch range and lists what it refused with the state', async () => {
    const { batchId, serials } = await mintBatch(6);
    const lines: string[] = [];
    const remote = { api: api.baseUrl, token: brand.token, brand: brand.brandId };
    await serialsCommand({ ...remote, action: 'decommission', reason: 'destroyed', serials: serials.slice(0, 2).join(',') }, (l) => lines.push(l), {});
    process.exitCode = 0;
    await serialsCommand({ ...remote, action: 'decommission', reason: 'expired', batch: batchId, from: '1', to: '3' }, (l) => lines.push(l), {});
    const failed = process.exitCode;
    process.exitCode = 0;
    expect(lines[0]).toMatch(/done: 2 moved, 0 refused of 2$/);
    expect(lines[1]).toMatch(/done: 1 moved, 2 refused of 3$/);
    expect(lines.slice(2)).toEqual([
      `refused ${serials[0]}: wrong_state (decommissioned: destroyed)`,
      `refused ${serials[1]}: wrong_state (decommissioned: destroyed)`,
    ]);
    expect(failed).toBe(1);
  });
});
