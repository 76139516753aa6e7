// `mintctl partner`: the brand's commands on the database (create a partner, grant it a key, list,
// revoke) and the partner's commands with its key against a running API (allocate, report, return
// every unused serial, status).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerAdminCommand, partnerRemoteCommand } from '../services/cli/src/partner.ts';
import { startTestApi, type TestApi } from '../services/api/test/support.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
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

describe('mintctl partner', () => {
  it('grants a key the brand can list and revoke; with it the partner allocates, reports and reads its grant', async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 20, { activationMode: 'first_scan' });
    const out: string[] = [];
    const print = (line: string) => out.push(line);
    await partnerAdminCommand(app.ctx, 'create', { brand: brand.brandId, name: 'Line 7' }, print);
    const { partner_id: partnerId } = JSON.parse(out.pop()!) as { partner_id: string };
    await partnerAdminCommand(app.ctx, 'grant', { brand: brand.brandId, partner: partnerId, batch: mintBatchId, quota: '5' }, print);
    const granted = JSON.parse(out.pop()!) as { key_id: string; api_key: string; quota: number };
    expect(granted.quota).toBe(5);

    const remote = { api: api.baseUrl, apiKey: granted.api_key, brand: brand.brandId };
    await partnerRemoteCommand('allocate', { ...remote, quantity: '3', key: 'order-1' }, print, {});
    const serials = out.splice(0);
    expect(serials).toHaveLength(3);
    await partnerRemoteCommand('encode', { ...remote, serials: serials.join(',') }, print, {});
    expect(out.pop()).toMatch(/done: 3 moved, 0 refused of 3$/);
    await partnerRemoteCommand('status', remote, print, {});
    expect(JSON.parse(out.pop()!)).toMatchObject({ partner: 'Line 7', key_id: granted.key_id, mint_batch_id: mintBatchId, quota: 5, allocated: 3 });
    // Every unused serial back in one request: none is left (all three encoded), then one of two more is.
    await partnerRemoteCommand('return-unused', { ...remote, key: 'back-1' }, print, {});
    expect(out.pop()).toMatch(/ done: 0 returned of 0 unused$/);
    await partnerRemoteCommand('allocate', { ...remote, quantity: '2', key: 'order-2' }, print, {});
    const more = out.splice(0);
    await partnerRemoteCommand('encode', { ...remote, serials: more[0]!, key: 'enc-2' }, print, {});
    out.pop();
    await partnerRemoteCommand('return-unused', { ...remote, key: 'back-2' }, print, {});
    expect(out.pop()).toMatch(/ done: 1 returned of 1 unused$/);
    await expect(partnerRemoteCommand('allocate', { ...remote, quantity: '3' }, print, {})).rejects.toThrow("exceeds the key's remaining quota of 0");

    await partnerAdminCommand(app.ctx, 'list', { brand: brand.brandId }, print);
    expect(JSON.parse(out.pop()!)).toMatchObject({ id: partnerId, name: 'Line 7', keys: [{ keyId: granted.key_id, quota: 5, allocated: 5, revokedAt: null }] });
    await partnerAdminCommand(app.ctx, 'revoke', { brand: brand.brandId, id: granted.key_id }, print);
    await expect(partnerRemoteCommand('status', remote, print, {})).rejects.toThrow('unknown API key');
    await expect(partnerRemoteCommand('allocate', { ...remote, apiKey: undefined }, print, {})).rejects.toThrow('MINT_API_KEY');
  });
});
