// mintctl's aggregation commands against a running API (the real HTTP server, in process): set the
// brand's GS1 company prefix, mint cases and a pallet, pack units and cases, unpack, and
// decommission a pallet with `mintctl serials --container`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerCommand } from '../services/cli/src/containers.ts';
import { serialsCommand } from '../services/cli/src/remote.ts';
import { startTestApi, type TestApi } from '../services/api/test/support.ts';
import { mintCompleted } from './support/pack-fixtures.ts';
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

describe('mintctl containers', () => {
  it('mints SSCCs, packs and unpacks them, and a move on the pallet reaches every unit inside', async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 4);
    const serials = (
      await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [mintBatchId])
    ).map((r) => r.serial);
    const remote = { api: api.baseUrl, token: brand.token, brand: brand.brandId };
    const lines: string[] = [];
    const print = (l: string) => lines.push(l);
    await containerCommand('container-settings', { ...remote, prefix: '0614141' }, print, {});
    expect(lines.pop()).toBe('GS1 company prefix 0614141, max depth 3');
    await containerCommand('mint-containers', { ...remote, level: 'case', count: '2' }, print, {});
    const cases = lines.splice(0);
    expect(cases).toHaveLength(2);
    expect(cases.every((s) => /^00614141\d{10}$/.test(s))).toBe(true);
    await containerCommand('mint-containers', { ...remote, level: 'pallet', count: '1' }, print, {});
    const [pallet] = lines.splice(0);
    await containerCommand('pack', { ...remote, sscc: cases[0], serials: serials.slice(0, 2).join(',') }, print, {});
    await containerCommand('pack', { ...remote, sscc: cases[1], serials: serials.slice(2, 4).join(',') }, print, {});
    await containerCommand('pack', { ...remote, sscc: pallet, ssccs: cases.join(',') }, print, {});
    await containerCommand('unpack', { ...remote, sscc: cases[1], serials: serials[3] }, print, {});
    expect(lines.splice(0)).toEqual([
      `packed 2 units and 0 containers into ${cases[0]}`,
      `packed 2 units and 0 containers into ${cases[1]}`,
      `packed 0 units and 2 containers into ${pallet}`,
      `unpacked 1 units and 0 containers out of ${cases[1]}`,
    ]);
    await serialsCommand({ ...remote, action: 'decommission', reason: 'stolen', container: pallet }, print, {});
    expect(lines.pop()).toMatch(/done: 3 moved, 0 refused of 3$/);
    await expect(containerCommand('pack', { ...remote, sscc: pallet }, print, {})).rejects.toThrow(/--serials, --ssccs/);
  });
});
