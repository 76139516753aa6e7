// Executor processes SIGKILLed during a chunked move on a container. A pallet of cases is
// decommissioned with one MoveSerials (the request moves the containers and the first chunk of
// units, the executors' serial move worker the rest, container by container); while the units
// move, the executor is killed FAULT_TRIALS / 2 times (at least once) and a new one started. The
// move must end done with every unit inside decommissioned exactly once: the containers and units
// decommissioned as stolen, active_tokens exact, every unit in one EPCIS event, the audit events'
// counts adding up, nothing refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { getMintKpis, mintContainers, moveSerials, packContainer, processMintJobBatch, setContainerSettings, submitMintRequest } from '@mint/usecases';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import { executorEnv, faultTrials, randomInt, report, sql, waitFor } from './support.ts';

/** Units in the pallet: 30 cases of 2,000 (6 chunks of 10,000 units). */
const perCase = 2_000;
const caseCount = 30;
const units = perCase * caseCount;
const kills = Math.max(1, Math.floor(faultTrials / 2));

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

describe('fault: executor SIGKILL during a move on a container', () => {
  it(`decommissions a pallet of ${caseCount} cases (${units} units) exactly through ${kills} SIGKILLs`, async () => {
    const url = app.database.url;
    const actor = { id: brand.userId };
    const submitted = await submitMintRequest(app.ctx, actor, {
      brandId: brand.brandId,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity: units,
      identityMode: 'serial',
      activationMode: 'active_at_mint',
      lots: [],
      idempotencyKey: null,
    });
    if (!submitted.ok) throw new Error('submit blocked');
    while (!(await processMintJobBatch(app.ctx, brand.brandId, submitted.mintJobId, 20_000)).done);
    const serials = (await sql<{ serial: string }>(url, 'select serial from mint_units where mint_batch_id = $1 order by seq', [submitted.mintBatchId])).map(
      (r) => r.serial,
    );
    await setContainerSettings(app.ctx, actor, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: null });
    const mint = async (level: string, count: number) =>
      (await mintContainers(app.ctx, actor, { brandId: brand.brandId, level, count, extensionDigit: 0, idempotencyKey: `${level}s` })).ssccs;
    const [pallet] = await mint('pallet', 1);
    const cases = await mint('case', caseCount);
    for (const [i, sscc] of cases.entries()) {
      await packContainer(app.ctx, actor, {
        brandId: brand.brandId,
        sscc,
        serials: serials.slice(i * perCase, (i + 1) * perCase),
        ssccs: [],
        idempotencyKey: `case-${i}`,
      });
    }
    await packContainer(app.ctx, actor, { brandId: brand.brandId, sscc: pallet!, serials: [], ssccs: cases, idempotencyKey: 'pallet' });
    const started = await moveSerials(app.ctx, actor, {
      brandId: brand.brandId,
      action: 'decommission',
      reason: 'stolen',
      target: { container: pallet! },
      idempotencyKey: 'theft',
    });
    expect(started).toMatchObject({ status: 'running', total: units });
    const progress = async () =>
      (await sql<{ moved: number; status: string }>(url, 'select moved, status from serial_moves where id = $1', [started.moveId]))[0]!;
    executor = await spawnExecutor(env);
    const points = Array.from({ length: kills }, () => Math.floor(units * (0.2 + Math.random() * 0.5))).sort((a, b) => a - b);
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
    const [containers] = await sql<{ n: string }>(
      url,
      `select count(*) as n from containers where brand_id = $1 and state = 'decommissioned' and reason = 'stolen'`,
      [brand.brandId],
    );
    const [events] = await sql<{ n: string }>(
      url,
      `select coalesce(sum((payload->>'count')::int), 0) as n from mint_events where event_type = 'mint_units_moved' and entity_id = $1`,
      [submitted.mintBatchId],
    );
    const [epcis] = await sql<{ total: string; distinct: string }>(
      url,
      `select count(*) as total, count(distinct e) as distinct from epcis_events, unnest(epcs) as e where move_id = $1 and e not like '%/00/%'`,
      [started.moveId],
    );
    const kpis = await getMintKpis(app.ctx, brand.brandId);
    console.log(
      report('container-move-kill', {
        trials: kills,
        units,
        moved: move!.moved,
        refused: move!.refused,
        epcs: Number(epcis!.total),
        duplicates: Number(epcis!.total) - Number(epcis!.distinct),
      }),
    );
    expect(move).toEqual({ moved: units, refused: 0 });
    expect(Number(states!.n)).toBe(units);
    expect(Number(containers!.n)).toBe(caseCount + 1);
    expect(kpis.activeTokens).toBe(0);
    expect(Number(events!.n)).toBe(units);
    expect(epcis).toEqual({ total: String(units), distinct: String(units) });
  });
});
