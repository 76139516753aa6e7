import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connectJetStreamBus, type JobBus } from '@mint/bus';
import { query } from '@mint/db';
import { getJobProgress, submitMintRequest } from '@mint/usecases';
import { startExecutor, type Executor } from '@mint/executor';
import { testInfra } from '../../../test/support/context.ts';
import { freshStreamNames } from '../../../test/support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let bus: JobBus;
let executor: Executor;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  bus = await connectJetStreamBus({ url: testInfra().natsUrl, ...freshStreamNames(), ackWaitMs: 5000 });
  executor = startExecutor({ ctx: app.ctx, bus, logger: pino({ level: 'silent' }), concurrency: 2, chunkSize: 2000, relayIntervalMs: 50 });
});
afterAll(async () => {
  await executor.stop();
  await bus.close();
  await app.close();
});

async function waitForTerminal(jobId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const progress = await getJobProgress(app.ctx, brand.brandId, jobId);
    if (progress.done || Date.now() > deadline) return progress;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('executor over NATS JetStream', () => {
  it('takes submitted serial jobs from QUEUED to COMPLETED through the outbox and the bus', async () => {
    const submits = await Promise.all([10_000, 3_001].map((requestedQuantity) => submitMintRequest(app.ctx, { id: brand.userId }, {
      brandId: brand.brandId, productId: brand.productId, productBatchId: null, requestedQuantity,
      identityMode: 'serial', activationMode: 'active_at_mint', lots: [], idempotencyKey: null,
    })));
    for (const submitted of submits) {
      if (!submitted.ok) throw new Error('blocked');
      const progress = await waitForTerminal(submitted.mintJobId);
      expect(progress.status).toBe('COMPLETED');
      const [units] = await query<{ n: string; serials: string; max: number }>(app.db.em.fork(),
        `select count(*) as n, count(distinct serial) as serials, max(seq) as max from mint_units where mint_batch_id = ?`, [submitted.mintBatchId]);
      expect(Number(units!.n)).toBe(progress.requestedQuantity);
      expect(Number(units!.serials)).toBe(progress.requestedQuantity);
      expect(units!.max).toBe(progress.requestedQuantity);
    }
    const [outbox] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox');
    expect(outbox!.n).toBe('0');
  });
});
