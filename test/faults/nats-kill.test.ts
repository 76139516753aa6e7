// nats-server (an instance of this test's own: own port, own store) SIGKILLed and restarted while
// clients keep submitting through the API and two executor processes mint. Submits made while NATS
// is down still succeed (the job and its outbox row commit together; the relay publishes later),
// and every submitted job ends COMPLETED with exactly its units.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freshStreamNames, startNatsServer, type NatsServer } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import {
  executorEnv,
  faultTrials,
  jobFacts,
  killAllApis,
  randomInt,
  report,
  scenarioTimeoutMs,
  spawnApi,
  sql,
  tally,
  waitFor,
  type ApiProcess,
} from './support.ts';

const streamNames = freshStreamNames();
let app: UseCaseBundle;
let brand: SeededBrand;
let nats: NatsServer | undefined;
const executors: ExecutorProcess[] = [];

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});

afterAll(async () => {
  for (const p of executors) p.signal('SIGKILL');
  await Promise.all([...executors.map((p) => p.exited), killAllApis()]);
  await nats?.stop();
  await app?.close();
});

/** The stream's and its consumers' counters, for a failure message. */
async function consumerInfo(natsUrl: string, stream: string): Promise<string> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const consumers = [];
    for await (const c of jsm.consumers.list(stream))
      consumers.push({
        name: c.name,
        pending: c.num_pending,
        ackPending: c.num_ack_pending,
        redelivered: c.num_redelivered,
        waiting: c.num_waiting,
        delivered: c.delivered,
      });
    return JSON.stringify({ messages: info.state.messages, consumers });
  } catch (error) {
    return `consumer info failed: ${String(error)}`;
  } finally {
    await nc.close();
  }
}

describe('fault: nats-server killed during submits and minting', () => {
  it(
    `loses no job through ${faultTrials} SIGKILLs of nats-server`,
    async () => {
      const url = app.database.url;
      nats = await startNatsServer();
      const settings = { databaseUrl: url, natsUrl: nats.url, ...streamNames };
      const api: ApiProcess = await spawnApi(settings);
      for (let i = 0; i < 2; i++)
        executors.push(await spawnExecutor(executorEnv(settings, { EXECUTOR_CONCURRENCY: '2', MINT_CHUNK_SIZE: '1000', LOG_LEVEL: 'info' })));
      // An executor refuses to start while NATS is unreachable: the faults begin once both run.
      await waitFor('both executors started', async () => executors.every((p) => p.lines.some((l) => l.includes('"executor started"'))), 30_000, 50);
      const baseUrl = api.baseUrl;

      let natsDown = false;
      let submitting = true;
      const accepted: string[] = [];
      const failures: string[] = [];
      let whileDown = 0;
      // Clients submitting over Connect JSON, each one call after another.
      const client = async () => {
        while (submitting) {
          const down = natsDown;
          try {
            const res = await fetch(`${baseUrl}/mint.v1.MintService/SubmitMintRequest`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
              body: JSON.stringify({
                brand_id: brand.brandId,
                product_id: brand.productId,
                requested_quantity: randomInt(200, 5000),
                identity_mode: 'IDENTITY_MODE_SERIAL',
                activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
                idempotency_key: crypto.randomUUID(),
              }),
            });
            const body = (await res.json()) as { ok?: boolean; mint_job_id?: string };
            if (res.status === 200 && body.ok === true && typeof body.mint_job_id === 'string') {
              accepted.push(body.mint_job_id);
              if (down && natsDown) whileDown++;
            } else {
              failures.push(`status ${res.status}: ${JSON.stringify(body)}`);
            }
          } catch (error) {
            failures.push(error instanceof Error ? error.message : String(error));
          }
          await sleep(randomInt(20, 120));
        }
      };
      const clients = [client(), client()];

      const started = Date.now();
      for (let trial = 0; trial < faultTrials; trial++) {
        await sleep(randomInt(300, 1500));
        await nats.kill('SIGKILL');
        natsDown = true;
        await sleep(randomInt(500, 2000));
        natsDown = false;
        await nats.restart();
      }
      await sleep(1000);
      submitting = false;
      await Promise.all(clients);
      const faultMs = Date.now() - started;

      // A message the killed server had acknowledged but not yet written is republished by the
      // executor's sweeper (after its idle window), hence the generous bound.
      await waitFor(
        'every submitted job COMPLETED',
        async () => {
          const [row] = await sql<{ n: string }>(
            url,
            `select count(*) as n from mint_jobs where id = any($1::uuid[]) and status not in ('COMPLETED', 'FAILED', 'CANCELLED')`,
            [accepted],
          );
          return row!.n === '0';
        },
        100_000,
        250,
      ).catch(async (error: unknown) => {
        const left = await sql(
          url,
          `select id, status, attempts, last_error, lease_owner from mint_jobs where id = any($1::uuid[]) and status <> 'COMPLETED'`,
          [accepted],
        );
        const [outboxRows] = await sql<{ n: string }>(url, 'select count(*) as n from outbox');
        const logs = executors
          .map((p) =>
            p.lines
              .slice(-12)
              .map((l) => l.slice(0, 300))
              .join('\n'),
          )
          .join('\n----\n');
        throw new Error(
          `${(error as Error).message}; outbox rows: ${outboxRows!.n}; unfinished (${left.length}): ${JSON.stringify(left.slice(0, 3))}\n${logs}\n${await consumerInfo(nats!.url, streamNames.stream)}`,
        );
      });
      const settledMs = Date.now() - started - faultMs;

      // The executors rode out every outage (none exited).
      expect(executors.map((p) => p.child.exitCode ?? p.child.signalCode)).toEqual([null, null]);
      const facts = await jobFacts(url);
      const t = tally(facts);
      const byId = new Set(facts.map((f) => f.jobId));
      const missing = accepted.filter((id) => !byId.has(id)).length;
      const [outbox] = await sql<{ n: string }>(url, 'select count(*) as n from outbox');
      report('nats-kill', {
        trials: faultTrials,
        submits: accepted.length,
        submitsWhileDown: whileDown,
        failedSubmits: failures.length,
        lost: t.lost + missing,
        duplicates: t.duplicates + (facts.length - accepted.length),
        notCompleted: t.notCompleted,
        inexact: t.inexact,
        drainMs: settledMs,
      });
      expect(failures).toEqual([]);
      expect(missing).toBe(0);
      expect(facts.length).toBe(accepted.length);
      expect(t).toEqual({ lost: 0, duplicates: 0, notCompleted: 0, inexact: 0 });
      expect(outbox!.n).toBe('0');
      expect(whileDown).toBeGreaterThan(0);
    },
    scenarioTimeoutMs(200_000, 10_000),
  );
});
