// A brand's GS1 company prefix is its own: a prefix another brand holds is refused as a conflict
// naming the field, and the refused brand's settings and events are left as they were.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '@mint/domain';
import { getContainerSettings, setContainerSettings } from '@mint/usecases';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

describe('setContainerSettings', () => {
  it("refuses a company prefix another brand holds as a conflict, and changes nothing of the second brand's", async () => {
    const [first, second] = [await app.seedBrand(), await app.seedBrand()];
    await setContainerSettings(app.ctx, { id: first.userId }, { brandId: first.brandId, companyPrefix: '0614142', maxDepth: null });
    const refused = setContainerSettings(app.ctx, { id: second.userId }, { brandId: second.brandId, companyPrefix: '0614142', maxDepth: 3 });
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toThrow('gs1_company_prefix is held by another brand');
    expect(await getContainerSettings(app.ctx, second.brandId)).toMatchObject({ companyPrefix: null });
    const settingsEvents = (brandId: string) =>
      query(app.db.em.fork(), "select 1 from mint_events where brand_id = ? and event_type = 'container_settings_set'", [brandId]);
    expect(await settingsEvents(first.brandId)).toHaveLength(1);
    expect(await settingsEvents(second.brandId)).toHaveLength(0);
    expect(await getContainerSettings(app.ctx, first.brandId)).toMatchObject({ companyPrefix: '0614142' });
  });
});
