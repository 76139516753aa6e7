// The executor's payload pack worker: picks up the pending pack a completed job left behind,
// generates it, and moves its batch to exported; stops cleanly.

import { Writable } from 'node:stream';
import { query } from '../../../test/support/sql.ts';
import { createLogger } from '@mint/runtime';
import { createFsPackStore } from '@mint/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted, tempStoreDir } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startPackWorker } from '../src/pack-worker.ts';

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
beforeAll(async () => {
  app = await setupUseCases();
  storeDir = await tempStoreDir();
});
afterAll(async () => {
  await app.close();
  await storeDir.remove();
});

const logger = createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() }));

async function state(batchId: string) {
  const [row] = await query<{ pack: string; storage_path: string | null; unit_count: number | null; batch: string }>(app.db.em.fork(),
    `select k.status as pack, k.storage_path, k.unit_count, b.status as batch from payload_packs k join mint_batches b on b.id = k.mint_batch_id where k.mint_batch_id = ?`,
    [batchId]);
  return row!;
}

describe('startPackWorker', () => {
  it('generates the pending packs of completed jobs and exports their batches, then stops', async () => {
    const brand = await app.seedBrand();
    const first = await mintCompleted(app.ctx, brand, 1_500);
    const worker = startPackWorker({ ctx: app.ctx, store: createFsPackStore(storeDir.dir), logger, pollIntervalMs: 20 });
    try {
      const second = await mintCompleted(app.ctx, brand, 40);
      for (let i = 0; i < 300; i++) {
        if ((await state(first.mintBatchId)).pack === 'ready' && (await state(second.mintBatchId)).pack === 'ready') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await state(first.mintBatchId)).toMatchObject({ pack: 'ready', unit_count: 1_500, batch: 'exported' });
      expect(await state(second.mintBatchId)).toMatchObject({ pack: 'ready', unit_count: 40, batch: 'exported' });
      expect((await state(first.mintBatchId)).storage_path).toMatch(new RegExp(`^${brand.brandId}/[0-9a-f-]{36}$`));
    } finally {
      await worker.stop();
    }
  });
});
