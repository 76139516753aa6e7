// Executor processes SIGKILLed while they deliver webhooks. One brand's endpoint (a loopback
// receiver answering after 0..100 ms) gets a few thousand events; at random points of the
// deliveries an executor is killed mid-flight and a new one started. Every event must arrive
// (nothing lost), every delivery end succeeded, and a repeat may only be a repeated webhook-id
// with the same body: what the dead executor had sent but not yet recorded.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { appendEvents } from '@mint/db';
import { createWebhookEndpoint } from '@mint/usecases';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import { executorEnv, faultTrials, randomInt, report, scenarioTimeoutMs, sql, waitFor } from './support.ts';

const events = 500 * faultTrials;
let app: UseCaseBundle;
let brand: SeededBrand;
let receiver: WebhookReceiver;
let env: Record<string, string>;
let executor: ExecutorProcess | undefined;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  receiver = await startWebhookReceiver(() => sleep(randomInt(0, 100)).then(() => 200));
  env = executorEnv(
    { databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...freshStreamNames() },
    {
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_CONCURRENCY: '16',
      WEBHOOK_PER_ENDPOINT_CONCURRENCY: '8',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_LEASE_MS: '2000',
    },
  );
});

afterAll(async () => {
  executor?.signal('SIGKILL');
  await executor?.exited;
  await receiver?.close();
  await app?.close();
});

describe('fault: executor SIGKILL while delivering webhooks', () => {
  it(
    `delivers ${events} events at least once through ${faultTrials} SIGKILLs, repeats only as a repeated webhook-id`,
    async () => {
      const { endpoint } = await createWebhookEndpoint(
        app.ctx,
        { id: brand.userId },
        { allowLoopback: true },
        {
          brandId: brand.brandId,
          url: receiver.url(),
          eventTypes: ['mint_units_activated'],
          description: 'faults',
        },
      );
      for (let i = 0; i < events; i += 500) {
        await app.db.em.fork().transactional((em) =>
          appendEvents(
            em,
            new Date(),
            Array.from({ length: Math.min(500, events - i) }, (_, k) => ({
              brandId: brand.brandId,
              eventType: 'mint_units_activated' as const,
              entityType: 'mint_batch' as const,
              entityId: brand.productId,
              actor: null,
              payload: { n: i + k },
            })),
          ),
        );
      }
      const ids = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
      executor = await spawnExecutor(env);
      const points = Array.from({ length: faultTrials }, () => Math.floor(events * (0.05 + Math.random() * 0.8))).sort((a, b) => a - b);
      for (const point of points) {
        await waitFor(`${point} of ${events} delivered`, async () => ids().size >= point, 60_000, 10);
        executor.signal('SIGKILL');
        await executor.exited;
        executor = await spawnExecutor(env);
      }
      const succeeded = async () =>
        Number(
          (
            await sql<{ n: string }>(app.database.url, `select count(*) as n from webhook_deliveries where endpoint_id = $1 and status = 'succeeded'`, [
              endpoint.id,
            ])
          )[0]!.n,
        );
      await waitFor('every delivery succeeded', async () => (await succeeded()) === events, 120_000, 50);
      const received = ids();
      const bodies = new Map<string, string>();
      let differing = 0;
      for (const r of receiver.received) {
        const id = String(r.headers['webhook-id']);
        if (bodies.has(id) && bodies.get(id) !== r.body) differing++;
        bodies.set(id, r.body);
      }
      const delivered = new Set([...bodies.values()].map((b) => (JSON.parse(b) as { data: { payload: { n: number } } }).data.payload.n));
      const lost = events - delivered.size;
      const duplicates = receiver.received.length - received.size;
      report('webhook-kill', { trials: faultTrials, events, lost, duplicates, differing });
      expect({ lost, differing, distinct: received.size }).toEqual({ lost: 0, differing: 0, distinct: events });
    },
    scenarioTimeoutMs(60_000, 20_000),
  );
});
