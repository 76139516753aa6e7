// The serial move worker when a move's chunk fails every time: a real check constraint refuses the
// lifecycle rows of one brand's units past seq 100, so that brand's recall fails at its second
// chunk on every attempt. Its move must not hold up another brand's move or mint job behind it,
// and ends failed after its attempts with the constraint named, in the API and the event log.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJobProgress, getSerialMove, listMintEvents, moveSerials, type UseCaseContext } from '@mint/usecases';
import { serialMoveRetry } from '@mint/domain';
import { query, run } from '../../../test/support/sql.ts';
import { testInfra } from '../../../test/support/context.ts';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startInProcessExecutor, waitUntil, type InProcessExecutor } from './executor-process.ts';

let app: UseCaseBundle;
let ctx: UseCaseContext;
let running: InProcessExecutor;
beforeAll(async () => {
  app = await setupUseCases();
  // Chunks of 100 units, the executor's and the requests' alike.
  ctx = { ...app.ctx, serialMoveChunk: 100 };
  running = await startInProcessExecutor({ ...app, ctx }, testInfra().natsUrl, { serialMovePollIntervalMs: 20 });
});
afterAll(async () => {
  await running.stop();
  await app.close();
});

async function mintedBatch(brand: SeededBrand, quantity: number): Promise<{ jobId: string; batchId: string }> {
  const { mintJobId, mintBatchId } = await submitSerial(ctx, brand, quantity);
  await waitUntil('the mint job to complete', async () => (await getJobProgress(ctx, brand.brandId, mintJobId)).status === 'COMPLETED');
  return { jobId: mintJobId, batchId: mintBatchId };
}

const recall = (brand: SeededBrand, batchId: string, key: string) =>
  moveSerials(
    ctx,
    { id: brand.userId },
    { brandId: brand.brandId, action: 'decommission', reason: 'recalled', target: { mintBatchId: batchId }, idempotencyKey: key },
  );

describe('serial move worker', () => {
  it("fails a move whose chunk fails every attempt, naming the error, without holding up another brand's move or mint job", { timeout: 120_000 }, async () => {
    const poisoned = await app.seedBrand();
    const other = await app.seedBrand();
    const a = await mintedBatch(poisoned, 500);
    const b = await mintedBatch(other, 500);
    await run(
      app.db.em.fork(),
      `alter table unit_states add constraint poisoned_past_100 check (brand_id <> '${poisoned.brandId}'::uuid or seq <= 100) not valid`,
    );
    try {
      // The first chunk (seqs 1-100) runs in the request; every later one fails on the constraint.
      const stuck = await recall(poisoned, a.batchId, 'recall-a');
      expect(stuck).toMatchObject({ status: 'running', moved: 100 });
      // Started after it (so older in the queue), the other brand's move and mint job complete while it fails.
      const moving = await recall(other, b.batchId, 'recall-b');
      const { mintJobId } = await submitSerial(ctx, other, 300);
      await waitUntil('the other brand to finish', async () => {
        const [move, job] = await Promise.all([getSerialMove(ctx, other.brandId, moving.moveId), getJobProgress(ctx, other.brandId, mintJobId)]);
        return move.status === 'done' && job.status === 'COMPLETED';
      });
      expect(await getSerialMove(ctx, other.brandId, moving.moveId)).toMatchObject({ status: 'done', moved: 500, refused: 0 });
      expect((await getSerialMove(ctx, poisoned.brandId, stuck.moveId)).status).toBe('running');

      await waitUntil('the stuck move to fail', async () => (await getSerialMove(ctx, poisoned.brandId, stuck.moveId)).status === 'failed', 60_000);
      const failed = await getSerialMove(ctx, poisoned.brandId, stuck.moveId);
      expect(failed).toMatchObject({ status: 'failed', moved: 100, refused: 0 });
      expect(failed.error).toMatch(new RegExp(`^gave up after ${serialMoveRetry.maxAttempts} failed attempts: .*poisoned_past_100`));
      const events = await listMintEvents(ctx, poisoned.brandId, {
        eventType: 'serial_move_failed',
        entityType: null,
        entityId: null,
        limit: null,
        cursor: null,
      });
      expect(events.items).toHaveLength(1);
      expect(events.items[0]).toMatchObject({
        entityType: 'serial_move',
        entityId: stuck.moveId,
        payload: { action: 'decommission', reason: 'recalled', total: 500, moved: 100, attempts: serialMoveRetry.maxAttempts, error: failed.error },
      });
      // Nothing of a failed attempt stayed: only the first chunk's units left circulation.
      expect(await attemptsOf(poisoned, stuck.moveId)).toBe(serialMoveRetry.maxAttempts);
    } finally {
      await run(app.db.em.fork(), 'alter table unit_states drop constraint if exists poisoned_past_100');
    }
  });
});

async function attemptsOf(brand: SeededBrand, moveId: string): Promise<number> {
  const [row] = await query<{ attempts: number }>(app.db.em.fork(), 'select attempts from serial_moves where brand_id = ? and id = ?', [brand.brandId, moveId]);
  return row!.attempts;
}
