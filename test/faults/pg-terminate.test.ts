// PostgreSQL connections terminated while executors write chunks: every backend of the test's
// database (but the terminating one) is ended with pg_terminate_backend at random moments when an
// executor connection is busy. The chunk transactions roll back, the executors retry, and every job
// ends COMPLETED with exactly N units. (This is the regression test of `releaseDeadClients` in
// @mint/db: without it every executor's pool ran out of slots after a round or two and hung.)

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { submitMintRequest } from '@mint/usecases';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import { executorEnv, faultTrials, jobFacts, randomInt, report, scenarioTimeoutMs, sql, tally, waitFor } from './support.ts';

const unitsPerJob = 60_000;
let app: UseCaseBundle;
let brand: SeededBrand;
const executors: ExecutorProcess[] = [];
/** The connection that terminates the others (and so survives them). */
let striker: pg.Client | undefined;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
});

afterAll(async () => {
  await striker?.end().catch(() => {});
  for (const p of executors) p.signal('SIGKILL');
  await Promise.all(executors.map((p) => p.exited));
  await app?.close();
});

describe('fault: PostgreSQL connections terminated during chunks', () => {
  it(
    `retries and mints exact counts through ${faultTrials} rounds of pg_terminate_backend`,
    async () => {
      const url = app.database.url;
      const db = app.database.name;
      // One job per trial, each terminated around a random point of its own progress; the jobs
      // running beside it are hit too.
      const jobIds: string[] = [];
      for (let i = 0; i < faultTrials; i++) {
        const r = await submitMintRequest(
          app.ctx,
          { id: brand.userId },
          {
            brandId: brand.brandId,
            productId: brand.productId,
            productBatchId: null,
            requestedQuantity: unitsPerJob,
            identityMode: 'serial',
            activationMode: 'active_at_mint',
            lots: [],
            idempotencyKey: null,
          },
        );
        if (!r.ok) throw new Error('submit blocked');
        jobIds.push(r.mintJobId);
      }
      const env = executorEnv({ databaseUrl: url, natsUrl: testInfra().natsUrl, ...freshStreamNames() }, { EXECUTOR_CONCURRENCY: '1' });
      for (let i = 0; i < 2; i++) executors.push(await spawnExecutor(env));

      const mintedOf = async (jobId: string) =>
        (await sql<{ minted: number }>(url, 'select minted_quantity as minted from mint_batches where mint_job_id = $1', [jobId]))[0]!.minted;

      const diagnose = async () =>
        JSON.stringify(
          await sql(
            url,
            `select j.id, j.status, j.attempts, j.last_error, j.lease_owner, j.lease_expires_at, b.minted_quantity
      from mint_jobs j join mint_batches b on b.mint_job_id = j.id where j.id = any($1::uuid[]) order by j.created_at`,
            [jobIds],
          ),
        ) +
        '\n' +
        JSON.stringify(
          await sql(
            url,
            `select pid, application_name, state, wait_event_type, wait_event, left(query, 80) as q, now() - state_change as since from pg_stat_activity where datname = $1`,
            [db],
          ),
        ) +
        '\n' +
        executors
          .map((p) =>
            p.lines
              .slice(-40)
              .map((l) => {
                try {
                  const o = JSON.parse(l) as Record<string, unknown>;
                  return `${String(o['time'])} ${String(o['msg'])} ${String(o['jobId'] ?? '')} ${JSON.stringify((o['err'] as { message?: string } | undefined)?.message ?? '')}`;
                } catch {
                  return l;
                }
              })
              .join('\n'),
          )
          .join('\n----\n');
      striker = new pg.Client({ connectionString: url, application_name: 'fault-striker' });
      await striker.connect();
      let terminated = 0;
      let midChunk = 0;
      for (const jobId of jobIds) {
        const target = Math.floor(unitsPerJob * (0.1 + Math.random() * 0.7));
        await waitFor(`job ${jobId} at ${target} units`, async () => (await mintedOf(jobId)) >= target, 60_000, 20).catch(async (error: unknown) => {
          throw new Error(`${(error as Error).message}\n${await diagnose()}`);
        });
        // Strike at the first instant an executor connection is in a statement or a transaction (a
        // chunk being written): the check and the termination are one statement of one connection.
        await sleep(randomInt(0, 10));
        const deadline = Date.now() + 10_000;
        for (;;) {
          const {
            rows: [row],
          } = await striker.query<{ ended: string; busy: string }>(
            `
          with busy as (select count(*) as n from pg_stat_activity where datname = $1 and application_name = 'minting-executor'
                          and (state = 'active' or state like 'idle in transaction%'))
          select (select n from busy) as busy,
                 case when (select n from busy) > 0
                   then (select count(*) filter (where pg_terminate_backend(pid)) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid())
                   else 0 end as ended`,
            [db],
          );
          if (Number(row!.busy) > 0) {
            terminated += Number(row!.ended);
            midChunk++;
            break;
          }
          if (Date.now() > deadline) break;
        }
      }

      await waitFor(
        'every job finished',
        async () => {
          const [row] = await sql<{ n: string }>(
            url,
            `select count(*) as n from mint_jobs where id = any($1::uuid[]) and status not in ('COMPLETED', 'FAILED', 'CANCELLED')`,
            [jobIds],
          );
          return row!.n === '0';
        },
        60_000 + 5_000 * faultTrials,
        200,
      ).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}\n${await diagnose()}`);
      });

      const facts = await jobFacts(url, jobIds);
      const t = tally(facts);
      const failed = facts.filter((f) => f.status !== 'COMPLETED');
      // A committed chunk resets a job's attempt count, so the retries are counted from the executors' logs.
      const retries = executors.flatMap((p) => p.lines).filter((line) => line.includes('"mint job attempt failed; retrying"')).length;
      report('pg-terminate', {
        trials: faultTrials,
        backendsTerminated: terminated,
        roundsMidChunk: midChunk,
        jobs: facts.length,
        unitsPerJob,
        lost: t.lost,
        duplicates: t.duplicates,
        notCompleted: t.notCompleted,
        inexact: t.inexact,
        retries,
      });
      const lastErrors =
        failed.length === 0
          ? []
          : await sql(url, 'select id, status, attempts, last_error from mint_jobs where id = any($1::uuid[])', [failed.map((f) => f.jobId)]);
      expect(lastErrors).toEqual([]);
      expect(t).toEqual({ lost: 0, duplicates: 0, notCompleted: 0, inexact: 0 });
      expect(midChunk).toBe(faultTrials);
      // The rounds must have hurt: some attempt failed and was retried.
      expect(retries).toBeGreaterThan(0);
    },
    scenarioTimeoutMs(240_000, 15_000),
  );
});
