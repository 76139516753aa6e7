// The executor's import worker over real JetStream: an import stored by the API's use case is
// relayed from the outbox, delivered on the 'import' subject and processed to COMPLETED.

import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import pino from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobMessage } from '@mint/bus';
import { query } from '../../../test/support/sql.ts';
import { findImportsToSweep, getProductImport, startProductImport } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../../../test/support/context.ts';
import { useUseCases } from '../../../test/support/usecases.ts';
import { runImportJob } from '../src/import-worker.ts';
import { startInProcessExecutor, type InProcessExecutor } from './executor-process.ts';

const { app, brand } = useUseCases();
let running: InProcessExecutor | undefined;

beforeAll(async () => {
  running = await startInProcessExecutor(app, testInfra().natsUrl);
});
afterAll(async () => {
  await running?.stop();
  const nc = await connect({ servers: testInfra().natsUrl });
  if (running !== undefined) await (await jetstreamManager(nc)).streams.delete(running.names.stream).catch(() => false);
  await nc.close();
});

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

const delivery = (id: string, lastDelivery = false): JobMessage => ({
  job: { kind: 'import', id, brandId: brand.brandId },
  deliveryCount: lastDelivery ? 10 : 1,
  lastDelivery,
  working() {},
  ack: async () => {},
  nak() {},
  term() {},
});

describe('import worker', () => {
  it('processes an import delivered over JetStream to COMPLETED, rows upserted by SKU', async () => {
    const rows = Array.from({ length: 2500 }, (_, i) => `IMP-${i},Imported ${i},ACTIVE,${i % 2 ? 'READY' : 'NOT_READY'}`);
    const csv = `sku,name,commercial_status,mint_readiness_status\n${rows.join('\n')}\nBAD,,ACTIVE,READY\n`;
    const started = await startProductImport(app.ctx, { id: brand.userId }, brand.brandId, Buffer.from(csv));
    const done = await waitFor(
      'the import',
      () => getProductImport(app.ctx, brand.brandId, started.id),
      (v) => v.status === 'COMPLETED',
    );
    expect(done).toMatchObject({
      totalRows: 2501,
      importedRows: 2500,
      failedRows: 1,
      errors: [{ row: 2501, field: 'name', message: 'must be 1 to 300 characters' }],
    });
    const [count] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from products where brand_id = ? and sku like 'IMP-%'`, [brand.brandId]);
    expect(count!.n).toBe('2500');
    const [outbox] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from outbox where job_id = ?', [started.id]);
    expect(outbox!.n).toBe('0');
  });

  it('drops a delivery of an unknown import and finishes a repeated delivery without writing again', async () => {
    expect(await runImportJob({ ctx: app.ctx, logger: pino({ level: 'silent' }) }, delivery('00000000-0000-4000-8000-000000000001'))).toEqual({ kind: 'drop' });
    const started = await startProductImport(
      app.ctx,
      { id: brand.userId },
      brand.brandId,
      Buffer.from('sku,name,commercial_status,mint_readiness_status\nREP-1,Rep,ACTIVE,READY\n'),
    );
    await waitFor(
      'the import',
      () => getProductImport(app.ctx, brand.brandId, started.id),
      (v) => v.status === 'COMPLETED',
    );
    expect(await runImportJob({ ctx: app.ctx, logger: pino({ level: 'silent' }) }, delivery(started.id))).toEqual({ kind: 'done' });
    expect((await getProductImport(app.ctx, brand.brandId, started.id)).importedRows).toBe(1);
  });

  it('marks the import FAILED on the last delivery of a failing attempt, without leaking the cause', async () => {
    // Stored directly (no outbox row), so only this test's deliveries run it.
    const id = '00000000-0000-4000-8000-00000000abcd';
    await app.db.em
      .fork()
      .execute(`insert into product_imports (brand_id, id, status, csv, total_rows, created_at) values (?, ?, 'QUEUED', ?, 1, now())`, [
        brand.brandId,
        id,
        Buffer.from('sku,name,commercial_status,mint_readiness_status\nX,Y,ACTIVE,READY\n'),
      ]);
    const logger = pino({ level: 'silent' });
    const broken = {
      ...app.ctx,
      clock: (): Date => {
        throw new Error('secret internal detail');
      },
    };
    expect(await runImportJob({ ctx: broken, logger }, delivery(id))).toEqual({ kind: 'retry', delayMs: 2000 });
    expect((await getProductImport(app.ctx, brand.brandId, id)).status).toBe('QUEUED');
    // On the last delivery the attempt fails again; the import is then marked FAILED.
    let calls = 0;
    const flaky = {
      ...app.ctx,
      clock: (): Date => {
        if (calls++ === 0) throw new Error('secret internal detail');
        return new Date();
      },
    };
    expect(await runImportJob({ ctx: flaky, logger }, delivery(id, true))).toEqual({ kind: 'done' });
    const view = await getProductImport(app.ctx, brand.brandId, id);
    expect(view).toMatchObject({
      status: 'FAILED',
      finishedAt: expect.any(Date),
      errors: [{ row: 0, field: null, message: 'gave up after 10 failed attempts (details in the executor log)' }],
    });
    expect(JSON.stringify(view)).not.toContain('secret');
  });

  it("defers an import while its brand has one running, runs another brand's meanwhile, and the sweeper finds the deferred one", async () => {
    const logger = pino({ level: 'silent' });
    const other = await app.seedBrand();
    const file = Buffer.from('sku,name,commercial_status,mint_readiness_status\nFAIR-1,Fair,ACTIVE,READY\n');
    // Stored directly (no outbox rows): only this test's deliveries run them. A1 is running (a fresh heartbeat).
    const [running, deferred, theirs] = [
      '00000000-0000-4000-8000-0000000fa1a1',
      '00000000-0000-4000-8000-0000000fa1a2',
      '00000000-0000-4000-8000-0000000fb1b1',
    ];
    await app.db.em.fork().execute(
      `insert into product_imports (brand_id, id, status, csv, total_rows, created_at, heartbeat_at) values
         (?, ?, 'PROCESSING', ?, 1, now(), now()), (?, ?, 'QUEUED', ?, 1, now() - interval '5 minutes', null), (?, ?, 'QUEUED', ?, 1, now(), null)`,
      [brand.brandId, running, file, brand.brandId, deferred, file, other.brandId, theirs, file],
    );
    expect(await runImportJob({ ctx: app.ctx, logger }, delivery(deferred))).toEqual({ kind: 'done' });
    expect((await getProductImport(app.ctx, brand.brandId, deferred)).status).toBe('QUEUED');
    const theirDelivery: JobMessage = { ...delivery(theirs), job: { kind: 'import', id: theirs, brandId: other.brandId } };
    expect(await runImportJob({ ctx: app.ctx, logger }, theirDelivery)).toEqual({ kind: 'done' });
    expect((await getProductImport(app.ctx, other.brandId, theirs)).status).toBe('COMPLETED');
    // The sweeper publishes the deferred import again; once the brand's running import is gone
    // quiet (its worker died: no heartbeat for over a minute), it runs.
    expect(await findImportsToSweep(app.ctx, 60_000)).toContainEqual({ id: deferred, brandId: brand.brandId });
    await app.db.em.fork().execute(`update product_imports set heartbeat_at = now() - interval '2 minutes' where id = ?`, [running]);
    expect(await runImportJob({ ctx: app.ctx, logger }, delivery(deferred))).toEqual({ kind: 'done' });
    expect((await getProductImport(app.ctx, brand.brandId, deferred)).status).toBe('COMPLETED');
    expect(await findImportsToSweep(app.ctx, 60_000)).not.toContainEqual({ id: deferred, brandId: brand.brandId });
  });
});
