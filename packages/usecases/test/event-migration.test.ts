// The migration that makes the executor's job events events of the batch: rows written before it
// (entity_type mint_job, the job's id) are moved to the batch, keeping the job's id in the payload.

import { migrate } from '@mint/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, submitSerial, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { processMintJobBatch } from '@mint/usecases';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

type Row = { event_type: string; entity_type: string; entity_id: string; job: string | null };
const shape = (mintJobId: string, mintBatchId: string) =>
  query<Row>(
    app.db.em.fork(),
    `select event_type, entity_type, entity_id, payload->>'mint_job_id' as job from mint_events
   where event_type in ('mint_job_started', 'mint_job_completed') and (entity_id = ? or entity_id = ?) order by event_type`,
    [mintJobId, mintBatchId],
  );

describe('Migration20261124030000', () => {
  it('moves existing job events to their batch, and back down', async () => {
    const brand = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(app.ctx, brand, 4);
    await processMintJobBatch(app.ctx, brand.brandId, mintJobId, null);
    const asBatch = [
      { event_type: 'mint_job_completed', entity_type: 'mint_batch', entity_id: mintBatchId, job: mintJobId },
      { event_type: 'mint_job_started', entity_type: 'mint_batch', entity_id: mintBatchId, job: mintJobId },
    ];
    expect(await shape(mintJobId, mintBatchId)).toEqual(asBatch);
    await app.db.migrator.down({ to: 'Migration20261121081401' });
    expect((await shape(mintJobId, mintBatchId)).map((r) => [r.event_type, r.entity_type, r.entity_id])).toEqual([
      ['mint_job_completed', 'mint_job', mintJobId],
      ['mint_job_started', 'mint_job', mintJobId],
    ]);
    await migrate(app.db);
    expect(await shape(mintJobId, mintBatchId)).toEqual(asBatch);
  });
});
