// A 3-node JetStream cluster (NATS_REPLICAS=3, PACK_STORE=nats) under node failures while two
// executor processes mint and an API serves downloads:
// - the job stream's leader SIGKILLed at random points of two large jobs and restarted;
// - a follower of the job stream SIGKILLed at random points and restarted;
// - a node holding payload packs (the pack bucket's leader) lost with its disk and replaced empty,
//   every pack made so far downloaded while it is gone.
// Every job ends COMPLETED with exactly its units (0 lost, 0 duplicated) and every pack downloads
// with a manifest whose hashes, sizes and row counts match its files.

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { packBucketName } from '@mint/runtime';
import { createFsPackStore, objectStoreStream } from '@mint/store';
import { createPayloadPackDownloadUrl, submitMintRequest } from '@mint/usecases';
import { freshStreamNames } from '../support/nats.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import {
  executorEnv,
  faultTrials,
  faultUnits,
  jobFacts,
  killAllApis,
  randomInt,
  report,
  scenarioTimeoutMs,
  scratchDir,
  spawnApi,
  sql,
  tally,
  waitFor,
  type ApiProcess,
} from './support.ts';
import { untar } from '../support/untar.ts';

const names = freshStreamNames();
const packStream = objectStoreStream(packBucketName({ natsStream: names.stream }));
/** The key the API child verifies with (see `spawnApi`). */
const downloadKey = { id: 'k1', secret: new Uint8Array(Buffer.alloc(32, 7)) };
let app: UseCaseBundle;
let brand: SeededBrand;
let cluster: NatsCluster;
let api: ApiProcess;
const executors: ExecutorProcess[] = [];

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  cluster = await startNatsCluster({ size: 3 });
  const settings = { databaseUrl: app.database.url, natsUrl: cluster.url, ...names };
  const clustered = { NATS_REPLICAS: '3', PACK_STORE: 'nats' };
  api = await spawnApi({ ...settings, env: clustered });
  for (let i = 0; i < 2; i++) executors.push(await spawnExecutor(executorEnv(settings, { ...clustered, EXECUTOR_CONCURRENCY: '2', LOG_LEVEL: 'info' })));
  await waitFor('both executors started', async () => executors.every((p) => p.lines.some((l) => l.includes('"executor started"'))), 30_000, 50).catch(
    (error: unknown) => {
      throw new Error(`${(error as Error).message}:
${executors.map((p) => p.lines.slice(-5).join('\n')).join('\n----\n')}`);
    },
  );
  await cluster.waitCurrent(names.stream);
  await cluster.waitCurrent(packStream);
}, 120_000);

afterAll(async () => {
  for (const p of executors) p.signal('SIGKILL');
  await Promise.all([...executors.map((p) => p.exited), killAllApis()]);
  await cluster?.stop();
  await app?.close();
});

async function submit(units: number): Promise<string> {
  const r = await submitMintRequest(
    app.ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity: units,
      identityMode: 'serial',
      activationMode: 'active_at_mint',
      lots: [],
      idempotencyKey: null,
    },
  );
  if (!r.ok) throw new Error('submit blocked');
  return r.mintJobId;
}

async function waitCompleted(jobIds: readonly string[], timeoutMs: number): Promise<void> {
  await waitFor(
    'every job COMPLETED',
    async () => {
      const [row] = await sql<{ n: string }>(
        app.database.url,
        `select count(*) as n from mint_jobs where id = any($1::uuid[]) and status not in ('COMPLETED', 'FAILED', 'CANCELLED')`,
        [jobIds],
      );
      return row!.n === '0';
    },
    timeoutMs,
    200,
  ).catch((error: unknown) => {
    const logs = executors
      .map((p) =>
        p.lines
          .slice(-10)
          .map((l) => l.slice(0, 300))
          .join('\n'),
      )
      .join('\n----\n');
    throw new Error(`${(error as Error).message}\n${logs}`);
  });
}

/**
 * Kills `role` of the job stream (its leader, or a random follower) `faultTrials` times, each time
 * while a job of `faultUnits` units runs: every trial submits a job and kills at a random point of
 * its progress (5 to 50 %), restarting the node after a random pause and waiting for it to catch
 * up. Earlier jobs may still be running; every job must end COMPLETED with exact units.
 */
async function killDuringJobs(role: 'leader' | 'follower'): Promise<void> {
  const url = app.database.url;
  const jobIds: string[] = [];
  const mintedOf = async (jobId: string) =>
    Number((await sql<{ n: string }>(url, 'select coalesce(sum(minted_quantity), 0) as n from mint_batches where mint_job_id = $1', [jobId]))[0]!.n);
  const isRunning = async (jobId: string) =>
    Number((await sql<{ n: string }>(url, `select count(*) as n from mint_jobs where id = $1 and status <> 'COMPLETED'`, [jobId]))[0]!.n) > 0;
  const victims: string[] = [];
  let duringJob = 0;
  for (let trial = 0; trial < faultTrials; trial++) {
    const jobId = await submit(faultUnits);
    jobIds.push(jobId);
    const point = Math.floor(faultUnits * (0.05 + Math.random() * 0.45));
    await waitFor(`${point} of ${faultUnits} units minted`, async () => (await mintedOf(jobId)) >= point, 120_000 + faultUnits / 10, 20);
    const placement = await cluster.placement(names.stream);
    const victim = role === 'leader' ? placement.leader : placement.followers[randomInt(0, placement.followers.length - 1)]!;
    const node = cluster.node(victim);
    if (await isRunning(jobId)) duringJob++;
    await node.kill('SIGKILL');
    victims.push(victim);
    await sleep(randomInt(300, 1500));
    await node.restart();
    await cluster.waitCurrent(names.stream, 60_000);
    if (role === 'leader') expect((await cluster.placement(names.stream)).leader).not.toBe('');
  }
  const total = jobIds.length * faultUnits;
  await waitCompleted(jobIds, 120_000 + total / 5);
  const facts = await jobFacts(url, jobIds);
  const t = tally(facts);
  report(`nats-cluster-${role}-kill`, {
    trials: faultTrials,
    kills: victims.length,
    killsDuringJob: duringJob,
    nodes: [...new Set(victims)].join('+'),
    jobs: jobIds.length,
    unitsPerJob: faultUnits,
    lost: t.lost,
    duplicates: t.duplicates,
    notCompleted: t.notCompleted,
    inexact: t.inexact,
  });
  expect(victims).toHaveLength(faultTrials);
  expect(duringJob).toBeGreaterThanOrEqual(Math.ceil(faultTrials / 2));
  expect(t).toEqual({ lost: 0, duplicates: 0, notCompleted: 0, inexact: 0 });
  expect(executors.map((p) => p.child.exitCode ?? p.child.signalCode)).toEqual([null, null]);
}

/** Downloads a pack through the API; a description of what is wrong with it, or null when its manifest holds. */
async function checkPack(packId: string, units: number): Promise<string | null> {
  const issued = await createPayloadPackDownloadUrl(
    app.ctx,
    { keys: [downloadKey], store: createFsPackStore(scratchDir) },
    { brandId: brand.brandId, packId, ttlSeconds: 900 },
  );
  const target = new URL(issued.url);
  const response = await fetch(`${api.baseUrl}${target.pathname}${target.search}`);
  if (response.status !== 200) return `status ${response.status}: ${await response.text()} ${api.lines.slice(-3).join('\n').slice(0, 1500)}`;
  const files = untar(Buffer.from(await response.arrayBuffer()));
  const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '{}') as {
    unit_count?: number;
    files?: { name: string; bytes: number; rows: number; sha256: string }[];
  };
  const names = (manifest.files ?? []).map((f) => f.name).sort();
  if (manifest.unit_count !== units || names.join() !== 'epcis.json,units.csv,units.jsonl') return `manifest ${JSON.stringify(manifest).slice(0, 300)}`;
  for (const f of manifest.files!) {
    const content = files.get(f.name);
    if (content === undefined || content.length !== f.bytes || createHash('sha256').update(content).digest('hex') !== f.sha256)
      return `${f.name} does not match the manifest`;
    // The tabular files have a row per unit (EPCIS counts its events).
    if (f.name !== 'epcis.json' && f.rows !== units) return `${f.name} has ${f.rows} rows`;
  }
  return null;
}

describe('fault: a node of a 3-node JetStream cluster fails', () => {
  it(
    `completes ${faultTrials} ${faultUnits}-unit jobs exactly, each through a SIGKILL of the stream leader`,
    async () => {
      await killDuringJobs('leader');
    },
    scenarioTimeoutMs(120_000, 30_000) + faultUnits,
  );

  it(
    `completes ${faultTrials} ${faultUnits}-unit jobs exactly, each through a SIGKILL of a stream follower`,
    async () => {
      await killDuringJobs('follower');
    },
    scenarioTimeoutMs(120_000, 30_000) + faultUnits,
  );

  it(
    `keeps every pack downloadable through ${faultTrials} losses of a node holding them`,
    async () => {
      const url = app.database.url;
      const units = Math.max(5_000, Math.floor(faultUnits / 20));
      const packs: { jobId: string; packId: string }[] = [];
      const lostNodes: string[] = [];
      let downloads = 0;
      const failures: string[] = [];
      for (let trial = 0; trial < faultTrials; trial++) {
        const jobId = await submit(units);
        await waitCompleted([jobId], 120_000);
        let packId = '';
        await waitFor(
          `the pack of job ${jobId} ready`,
          async () => {
            const [row] = await sql<{ id: string; status: string }>(
              url,
              `select p.id, p.status from payload_packs p join mint_batches b on b.brand_id = p.brand_id and b.id = p.mint_batch_id
          where b.mint_job_id = $1`,
              [jobId],
            );
            packId = row?.id ?? '';
            return row?.status === 'ready';
          },
          120_000,
          200,
        );
        packs.push({ jobId, packId });
        // The bucket's leader holds every pack: lose it with its disk.
        const victim = cluster.node((await cluster.placement(packStream)).leader);
        await victim.kill('SIGKILL');
        await victim.wipe();
        lostNodes.push(victim.name);
        const lostAt = Date.now();
        for (const pack of packs) {
          const problem = await checkPack(pack.packId, units);
          downloads++;
          if (problem !== null) failures.push(`trial ${trial}, node ${victim.name} lost ${Date.now() - lostAt} ms before, pack ${pack.packId}: ${problem}`);
        }
        // A replacement node with an empty disk takes its place and catches up.
        await victim.restart();
        await cluster.waitCurrent(packStream, 60_000);
        await cluster.waitCurrent(names.stream, 60_000);
      }
      const facts = await jobFacts(
        url,
        packs.map((p) => p.jobId),
      );
      const t = tally(facts);
      report('nats-cluster-pack-node-loss', {
        trials: faultTrials,
        nodesLost: lostNodes.join('+'),
        packs: packs.length,
        unitsPerPack: units,
        downloads,
        badDownloads: failures.length,
        lost: t.lost,
        duplicates: t.duplicates,
        notCompleted: t.notCompleted,
        inexact: t.inexact,
      });
      expect(failures).toEqual([]);
      expect(t).toEqual({ lost: 0, duplicates: 0, notCompleted: 0, inexact: 0 });
    },
    scenarioTimeoutMs(120_000, 60_000),
  );
});
