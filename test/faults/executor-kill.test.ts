// Executor processes SIGKILLed at random chunks of large jobs. Two executor daemons share two big
// serial jobs; at random points of the combined progress one that holds a lease is killed (at a
// random moment within its chunk) and a new one started in its place. Every job must end COMPLETED
// with exactly N units, seqs 1..N and no duplicate serial.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { submitMintRequest } from '@mint/usecases';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import {
  databaseEnv,
  executorEnv,
  faultTrials,
  stopPgBouncer,
  faultUnits,
  jobFacts,
  randomInt,
  report,
  scenarioTimeoutMs,
  sql,
  tally,
  waitFor,
} from './support.ts';

const jobCount = 2;
let app: UseCaseBundle;
let brand: SeededBrand;
let env: Record<string, string>;
const slots: (ExecutorProcess | undefined)[] = [undefined, undefined];

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  env = executorEnv(
    { databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...freshStreamNames() },
    {
      EXECUTOR_CONCURRENCY: String(jobCount),
      ...(await databaseEnv(app.database.url)),
    },
  );
});

afterAll(async () => {
  for (const p of slots) p?.signal('SIGKILL');
  await Promise.all(slots.map((p) => p?.exited));
  await stopPgBouncer();
  await app?.close();
});

describe('fault: executor SIGKILL at random chunks', () => {
  it(
    `completes ${jobCount} jobs of ${faultUnits} units exactly through ${faultTrials} SIGKILLs`,
    async () => {
      const url = app.database.url;
      const jobIds: string[] = [];
      for (let i = 0; i < jobCount; i++) {
        const r = await submitMintRequest(
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
        if (!r.ok) throw new Error('submit blocked');
        jobIds.push(r.mintJobId);
      }
      const total = jobCount * faultUnits;
      const minted = async () =>
        Number(
          (await sql<{ n: string }>(url, 'select coalesce(sum(minted_quantity), 0) as n from mint_batches where mint_job_id = any($1::uuid[])', [jobIds]))[0]!
            .n,
        );
      /** Pids of executors holding a live lease on one of the jobs. */
      const leaseHolders = async () => {
        const rows = await sql<{ owner: string }>(
          url,
          `select lease_owner as owner from mint_jobs
        where id = any($1::uuid[]) and status = 'PROCESSING' and lease_owner is not null and lease_expires_at > now()`,
          [jobIds],
        );
        // lease owner: executor-<host>-<pid>/<random>
        return new Set(rows.map((r) => Number(/-(\d+)\//.exec(r.owner)?.[1])));
      };

      for (let s = 0; s < slots.length; s++) slots[s] = await spawnExecutor(env);
      // Kill points spread at random over the combined progress, early enough that work is left.
      const points = Array.from({ length: faultTrials }, () => Math.floor(total * (0.02 + Math.random() * 0.85))).sort((a, b) => a - b);
      const killedAt: number[] = [];
      let missed = 0;
      for (const point of points) {
        await waitFor(`${point} of ${total} units minted`, async () => (await minted()) >= point, 120_000 + total / 10, 20);
        let victim = -1;
        const deadline = Date.now() + 15_000;
        while (victim < 0 && Date.now() < deadline) {
          const holders = await leaseHolders();
          const candidates = slots.map((p, i) => (p !== undefined && holders.has(p.child.pid ?? -1) ? i : -1)).filter((i) => i >= 0);
          if (candidates.length > 0) victim = candidates[randomInt(0, candidates.length - 1)]!;
          else await sleep(20);
        }
        if (victim < 0) {
          // No executor held a lease for 15 s (both jobs finished early): kill one anyway, but count it.
          missed++;
          victim = randomInt(0, slots.length - 1);
        }
        await sleep(randomInt(0, 60));
        const p = slots[victim]!;
        p.signal('SIGKILL');
        await p.exited;
        killedAt.push(await minted());
        slots[victim] = await spawnExecutor(env);
      }

      await waitFor(
        'every job COMPLETED',
        async () => {
          const rows = await sql<{ n: string }>(
            url,
            `select count(*) as n from mint_jobs where id = any($1::uuid[]) and status not in ('COMPLETED', 'FAILED', 'CANCELLED')`,
            [jobIds],
          );
          return rows[0]!.n === '0';
        },
        120_000 + total / 5,
        200,
      );

      const facts = await jobFacts(url, jobIds);
      const t = tally(facts);
      const [all] = await sql<{ dup: string }>(url, 'select count(*) - count(distinct (brand_id, serial)) as dup from mint_units');
      const duplicates = t.duplicates + Number(all!.dup);
      report('executor-sigkill', {
        trials: faultTrials,
        kills: killedAt.length,
        killsWithoutLease: missed,
        jobs: facts.length,
        unitsPerJob: faultUnits,
        lost: t.lost,
        duplicates,
        notCompleted: t.notCompleted,
        inexact: t.inexact,
        leaseClaims: facts.reduce((n, f) => n + f.leaseClaims, 0),
      });
      expect(t.lost).toBe(0);
      expect(duplicates).toBe(0);
      expect(facts.map((f) => f.status)).toEqual(facts.map(() => 'COMPLETED'));
      for (const f of facts) {
        expect({ units: f.units, serials: f.distinctSerials, seqs: f.seqsInRange, minted: f.minted, evented: f.evented }).toEqual({
          units: faultUnits,
          serials: faultUnits,
          seqs: faultUnits,
          minted: faultUnits,
          evented: faultUnits,
        });
      }
      expect(killedAt).toHaveLength(faultTrials);
      expect(missed).toBe(0);
    },
    scenarioTimeoutMs(120_000, 25_000) + faultUnits / 2,
  );
});
