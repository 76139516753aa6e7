// Executor processes SIGKILLed during a bulk serial move. A whole batch is decommissioned with one
// MoveSerials (the API runs the first chunk, the executors' serial move worker the rest); at random
// points of its progress the executor is killed and a new one started. The move must end done with
// every unit decommissioned exactly once: active_tokens exact, every unit in one EPCIS event, the
// audit events' counts adding up to the batch, nothing refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { getMintKpis, moveSerials, processMintJobBatch, submitMintRequest } from '@mint/usecases';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import { executorEnv, faultTrials, faultUnits, randomInt, report, sql, waitFor } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let env: Record<string, string>;
let executor: ExecutorProcess | undefined;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  env = executorEnv({ databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...freshStreamNames() });
});

afterAll(async () => {
  executor?.signal('SIGKILL');
  await executor?.exited;
  await app?.close();
});

describe('fault: executor SIGKILL during a bulk serial move', () => {
  it(`decommissions a ${faultUnits}-unit batch exactly through ${faultTrials} SIGKILLs`, async () => {
    const url = app.database.url;
    const submitted = await submitMintRequest(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        productId: brand.productId,
        productBatchId: null,
        requestedQuantity: faultUnits,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: null,
      },
    );
    if (!submitted.ok) throw new Error('submit blocked');
    while (!(await processMintJobBatch(app.ctx, brand.brandId, submitted.mintJobId, 20_000)).done);
    const started = await moveSerials(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        action: 'decommission',
        reason: 'stolen',
        target: { mintBatchId: submitted.mintBatchId },
        idempotencyKey: 'theft',
      },
    );
    expect(started.status).toBe('running');
    const progress = async () =>
      (await sql<{ moved: number; status: string }>(url, 'select moved, status from serial_moves where id = $1', [started.moveId]))[0]!;
    executor = await spawnExecutor(env);
    const points = Array.from({ length: faultTrials }, () => Math.floor(faultUnits * (0.15 + Math.random() * 0.7))).sort((a, b) => a - b);
    for (const point of points) {
      await waitFor(`${point} units moved`, async () => (await progress()).moved >= point, 120_000, 10);
      await sleep(randomInt(0, 80));
      executor.signal('SIGKILL');
      await executor.exited;
      executor = await spawnExecutor(env);
    }
    await waitFor('the move done', async () => (await progress()).status === 'done', 180_000, 50);
    const [move] = await sql<{ moved: number; refused: number }>(url, 'select moved, refused from serial_moves where id = $1', [started.moveId]);
    const [states] = await sql<{ n: string }>(
      url,
      `select count(*) as n from unit_states where mint_batch_id = $1 and state = 'decommissioned' and reason = 'stolen'`,
      [submitted.mintBatchId],
    );
    const [active] = await sql<{ n: string }>(url, `select count(*) as n from mint_units where mint_batch_id = $1 and status = 'active'`, [
      submitted.mintBatchId,
    ]);
    const [events] = await sql<{ n: string }>(
      url,
      `select coalesce(sum((payload->>'count')::int), 0) as n from mint_events where event_type = 'mint_units_moved' and entity_id = $1`,
      [submitted.mintBatchId],
    );
    const [epcis] = await sql<{ total: string; distinct: string }>(
      url,
      `select count(*) as total, count(distinct e) as distinct from epcis_events, unnest(epcs) as e where move_id = $1`,
      [started.moveId],
    );
    const kpis = await getMintKpis(app.ctx, brand.brandId);
    console.log(
      report('serial-move-kill', {
        trials: faultTrials,
        units: faultUnits,
        moved: move!.moved,
        refused: move!.refused,
        epcs: Number(epcis!.total),
        duplicates: Number(epcis!.total) - Number(epcis!.distinct),
      }),
    );
    expect(move).toEqual({ moved: faultUnits, refused: 0 });
    expect(Number(states!.n)).toBe(faultUnits);
    expect(Number(active!.n)).toBe(0);
    expect(kpis.activeTokens).toBe(0);
    expect(Number(events!.n)).toBe(faultUnits);
    expect(epcis).toEqual({ total: String(faultUnits), distinct: String(faultUnits) });
  });
});
