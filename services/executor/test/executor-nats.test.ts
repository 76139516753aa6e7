import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { JobBus } from '@mint/bus';
import { query } from '../../../test/support/sql.ts';
import { startNatsServer, type NatsServer, type StreamNames } from '../../../test/support/nats.ts';
import { submitSerial, useUseCases } from '../../../test/support/usecases.ts';
import { jobState, startInProcessExecutor, unitFacts, waitUntil, type InProcessExecutor } from './executor-process.ts';

const { app, brand } = useUseCases();
let nats: NatsServer;
let running: InProcessExecutor;
let bus: JobBus;
let names: StreamNames;
beforeAll(async () => {
  nats = await startNatsServer();
  running = await startInProcessExecutor(app, nats.url, { concurrency: 2, leaseMs: 5000 });
  ({ bus, names } = running);
});
afterAll(async () => {
  await running.stop();
  await nats.stop();
});

const submit = (requestedQuantity: number) => submitSerial(app.ctx, brand, requestedQuantity);

describe('executor and an unreliable NATS', () => {
  it('completes a job submitted while NATS was down, once NATS is back', async () => {
    await nats.kill('SIGKILL');
    const { mintJobId, mintBatchId } = await submit(7000);
    await sleep(500);
    const [outbox] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox where job_id = ?', [mintJobId]);
    expect(outbox!.n).toBe('1');
    expect((await jobState(app.db, mintJobId)).status).toBe('QUEUED');
    await nats.restart();
    await waitUntil('completion', async () => (await jobState(app.db, mintJobId)).status === 'COMPLETED', 30_000);
    expect(await unitFacts(app.db, mintBatchId)).toEqual({ units: 7000, serials: 7000, minSeq: 1, maxSeq: 7000, minted: 7000, evented: 7000 });
  }, 45_000);

  it('mints one set of units when the same job message is delivered twice', async () => {
    // Two more copies next to the relay's (published without a dedupe id), run by two concurrent handlers.
    const { mintJobId, mintBatchId } = await submit(40_000);
    const nc = await connect({ servers: nats.url });
    try {
      const body = new TextEncoder().encode(JSON.stringify({ id: mintJobId, brandId: brand.brandId }));
      await jetstream(nc).publish(`${names.subjectPrefix}.jobs.mint`, body);
      await jetstream(nc).publish(`${names.subjectPrefix}.jobs.mint`, body);
    } finally {
      await nc.close();
    }
    await waitUntil('completion', async () => (await jobState(app.db, mintJobId)).status === 'COMPLETED', 20_000);
    await waitUntil('all copies settled', async () => (await bus.pending('mint')) === 0, 10_000);
    expect(await unitFacts(app.db, mintBatchId)).toEqual({ units: 40_000, serials: 40_000, minSeq: 1, maxSeq: 40_000, minted: 40_000, evented: 40_000 });
    const [started] = await query<{ n: string }>(
      app.db.em.fork(),
      `select count(*) as n from mint_events where payload->>'mint_job_id' = ? and event_type = 'mint_job_started'`,
      [mintJobId],
    );
    expect(started!.n).toBe('1');
  }, 45_000);
});
