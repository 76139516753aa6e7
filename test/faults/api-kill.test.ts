// The API process SIGKILLed after a submit committed but before the client got the response; the
// client's retry with the same idempotency key must reach the same job, and each key makes one job.
//
// POST /v1/mint/jobs (Idempotency-Key): a trigger installed in this test's own database holds the
// statement that marks the key's record completed (the last write before the response) on an
// advisory lock the test owns. Once every request's job has committed and its connection waits
// there, the API is killed: the commit happened, no response was sent. The retry first gets 409
// (the dead request's record is fresh); once the record is older than the stale window (60 s; the
// test ages it rather than waiting) the retry takes over and answers with the same job; later
// retries replay that answer.
//
// Connect SubmitMintRequest (idempotency_key): nothing follows the commit but the response, so the
// response is held on the way instead, by a proxy that forwards requests and never answers; the API
// is killed once every request's job has committed. The retry answers with the same job.

import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createApiKey } from '@mint/usecases';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { freePort } from '../support/ports.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import {
  faultTrials,
  killAllApis,
  stopPgBouncer,
  randomInt,
  report,
  scenarioTimeoutMs,
  spawnApi,
  sql,
  waitFor,
  type ApiProcess,
  type ApiSettings,
} from './support.ts';

/** Requests in flight at each kill. */
const requestsPerKill = 4;
const holdLock = 724_242;
let app: UseCaseBundle;
let brand: SeededBrand & { apiKey: string };
let settings: ApiSettings;
let api: ApiProcess | undefined;
let holder: pg.Client | undefined;
let proxy: Server | undefined;
const proxied = new Set<Socket>();

beforeAll(async () => {
  app = await setupUseCases();
  const seeded = await app.seedBrand();
  brand = { ...seeded, apiKey: (await createApiKey(app.ctx, { brandId: seeded.brandId, name: 'faults', scopes: ['mint:write', 'mint:read'] })).key };
  settings = { databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...freshStreamNames(), port: await freePort() };
  // Test-only, in this test's own database: completing an idempotency record waits while the test holds the lock.
  await sql(
    app.database.url,
    `
    create function fault_hold_completion() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock_shared(${holdLock}); return new; end $$;
    create trigger fault_hold_completion before update on idempotency_records
      for each row when (old.state = 'in_progress' and new.state = 'completed') execute function fault_hold_completion();`,
  );
});

afterAll(async () => {
  for (const socket of proxied) socket.destroy();
  proxy?.close();
  await killAllApis();
  await stopPgBouncer();
  await holder?.end().catch(() => {});
  await app?.close();
});

/** Kills the API, then ends its connections still on the server, as the death of its host would. */
async function killApi(): Promise<void> {
  await api!.kill();
  await sql(settings.databaseUrl, `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'minting-api'`, [
    app.database.name,
  ]);
}

const mintJobBody = () => ({ product_id: brand.productId, requested_quantity: randomInt(1, 50), identity_mode: 'serial', activation_mode: 'active_at_mint' });

/** POST /v1/mint/jobs; resolves with status and body, or with the connection error. */
async function createMintJob(baseUrl: string, key: string, body: object): Promise<{ status: number; body: any; replayed: boolean } | { error: string }> {
  try {
    const res = await fetch(`${baseUrl}/v1/mint/jobs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${brand.token}`,
        'x-api-key': brand.apiKey,
        'x-workspace-id': brand.brandId,
        'idempotency-key': key,
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json(), replayed: res.headers.get('idempotent-replayed') === 'true' };
  } catch (error) {
    return { error: error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? '')}` : String(error) };
  }
}

/** Connect JSON SubmitMintRequest; resolves with status and body, or with the connection error. */
async function submitMintRequest(baseUrl: string, key: string): Promise<{ status: number; body: any } | { error: string }> {
  try {
    const res = await fetch(`${baseUrl}/mint.v1.MintService/SubmitMintRequest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
      body: JSON.stringify({
        brand_id: brand.brandId,
        product_id: brand.productId,
        requested_quantity: 7,
        identity_mode: 'IDENTITY_MODE_SERIAL',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
        idempotency_key: key,
      }),
    });
    return { status: res.status, body: await res.json() };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Jobs of the workspace, by the idempotency key stored on them. */
async function jobsByKey(): Promise<Map<string, string[]>> {
  const rows = await sql<{ key: string; id: string }>(settings.databaseUrl, 'select idempotency_key as key, id from mint_jobs where brand_id = $1', [
    brand.brandId,
  ]);
  const byKey = new Map<string, string[]>();
  for (const r of rows) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r.id]);
  return byKey;
}

describe('fault: the API killed between commit and response', () => {
  it(
    `POST /v1/mint/jobs: a retry with the same Idempotency-Key gets the same job, through ${faultTrials} kills`,
    async () => {
      const url = settings.databaseUrl;
      const outcomes: { key: string; firstRetry: number; jobId: string | undefined; replayedJobId: string | undefined; answeredBeforeKill: boolean }[] = [];
      for (let trial = 0; trial < faultTrials; trial++) {
        await killAllApis();
        api = await spawnApi(settings);
        holder = new pg.Client({ connectionString: url, application_name: 'fault-holder' });
        await holder.connect();
        await holder.query('select pg_advisory_lock($1)', [holdLock]);
        const keys = Array.from({ length: requestsPerKill }, () => randomUUID());
        const bodies = keys.map(() => mintJobBody());
        const firstAttempts = keys.map((key, i) => createMintJob(api!.baseUrl, key, bodies[i]!));
        // Every request committed its job and now waits to mark its key completed.
        await waitFor(
          'every request between commit and response',
          async () => {
            const [row] = await sql<{ waiting: string; records: string }>(
              url,
              `select
            (select count(*) from pg_stat_activity where datname = $1 and application_name = 'minting-api' and wait_event = 'advisory') as waiting,
            (select count(*) from idempotency_records where brand_id = $2 and key = any($3::text[])) as records`,
              [app.database.name, brand.brandId, keys],
            );
            return Number(row!.waiting) === requestsPerKill && Number(row!.records) === requestsPerKill;
          },
          20_000,
          10,
        ).catch(async (error: unknown) => {
          const settled = await Promise.race([Promise.all(firstAttempts), new Promise((resolve) => setTimeout(() => resolve('pending'), 100))]);
          const activity = await sql(url, 'select application_name, state, wait_event, left(query, 100) as q from pg_stat_activity where datname = $1', [
            app.database.name,
          ]);
          throw new Error(`${(error as Error).message}: ${JSON.stringify(settled)} ${JSON.stringify(activity)} ${api!.lines.slice(-5).join('\n')}`);
        });
        await killApi();
        await holder.end();
        holder = undefined;
        const first = await Promise.all(firstAttempts);

        api = await spawnApi(settings);
        const retries = await Promise.all(keys.map((key, i) => createMintJob(api!.baseUrl, key, bodies[i]!)));
        // The first attempt died a minute ago (as far as the stale window is concerned).
        await sql(url, `update idempotency_records set created_at = created_at - interval '61 seconds' where brand_id = $1 and key = any($2::text[])`, [
          brand.brandId,
          keys,
        ]);
        const takeovers = await Promise.all(keys.map((key, i) => createMintJob(api!.baseUrl, key, bodies[i]!)));
        const replays = await Promise.all(keys.map((key, i) => createMintJob(api!.baseUrl, key, bodies[i]!)));
        keys.forEach((key, i) => {
          const retry = retries[i]!;
          const takeover = takeovers[i]!;
          const replay = replays[i]!;
          outcomes.push({
            key,
            firstRetry: 'status' in retry ? retry.status : -1,
            jobId: 'status' in takeover && takeover.status === 202 ? takeover.body?.data?.mint_job_id : undefined,
            replayedJobId: 'status' in replay && replay.status === 202 && replay.replayed ? replay.body?.data?.mint_job_id : undefined,
            answeredBeforeKill: 'status' in first[i]!,
          });
        });
        await api.kill();
      }

      const byKey = await jobsByKey();
      const keyed = new Map(outcomes.map((o) => [o.key, o]));
      // Jobs carry Submit's key derived from the Idempotency-Key: match them through the answers.
      const jobKeys = new Map<string, number>();
      for (const ids of byKey.values()) for (const id of ids) jobKeys.set(id, (jobKeys.get(id) ?? 0) + 1);
      const answered = new Set(outcomes.map((o) => o.jobId).filter((id) => id !== undefined));
      const lost = outcomes.filter((o) => o.jobId === undefined || !jobKeys.has(o.jobId)).length;
      const duplicates = [...byKey.values()].flat().length - keyed.size;
      report('api-kill /v1/mint/jobs', {
        trials: faultTrials,
        requests: outcomes.length,
        answeredBeforeKill: outcomes.filter((o) => o.answeredBeforeKill).length,
        firstRetry409: outcomes.filter((o) => o.firstRetry === 409).length,
        lost,
        duplicates,
        replayMismatch: outcomes.filter((o) => o.replayedJobId !== o.jobId).length,
      });
      expect(outcomes.filter((o) => o.answeredBeforeKill)).toEqual([]);
      expect(outcomes.map((o) => o.firstRetry)).toEqual(outcomes.map(() => 409));
      expect(lost).toBe(0);
      expect(duplicates).toBe(0);
      expect(answered.size).toBe(outcomes.length);
      expect(outcomes.filter((o) => o.replayedJobId !== o.jobId)).toEqual([]);
    },
    scenarioTimeoutMs(60_000, 15_000),
  );

  it(
    `Connect SubmitMintRequest: a retry with the same idempotency_key gets the same job, through ${faultTrials} kills`,
    async () => {
      const url = settings.databaseUrl;
      // Forwards requests to the API and swallows its answers: the response never reaches the client.
      const proxyPort = await freePort();
      proxy = createServer((client) => {
        proxied.add(client);
        const upstream = netConnect(settings.port!, '127.0.0.1');
        proxied.add(upstream);
        client.on('data', (chunk) => upstream.write(chunk));
        upstream.on('data', () => {});
        const close = () => {
          client.destroy();
          upstream.destroy();
          proxied.delete(client);
          proxied.delete(upstream);
        };
        client.on('close', close).on('error', close);
        upstream.on('close', close).on('error', close);
      });
      await new Promise<void>((resolve) => proxy!.listen(proxyPort, '127.0.0.1', resolve));
      const viaProxy = `http://127.0.0.1:${proxyPort}`;

      const outcomes: { key: string; answeredBeforeKill: boolean; jobId: string | undefined; duplicateFlag: boolean }[] = [];
      for (let trial = 0; trial < faultTrials; trial++) {
        await killAllApis();
        api = await spawnApi(settings);
        const keys = Array.from({ length: requestsPerKill }, () => randomUUID());
        const firstAttempts = keys.map((key) => submitMintRequest(viaProxy, key));
        await waitFor(
          'every job committed',
          async () => {
            const [row] = await sql<{ n: string }>(url, 'select count(*) as n from mint_jobs where brand_id = $1 and idempotency_key = any($2::uuid[])', [
              brand.brandId,
              keys,
            ]);
            return Number(row!.n) === requestsPerKill;
          },
          20_000,
          10,
        );
        await killApi();
        const first = await Promise.all(firstAttempts);
        api = await spawnApi(settings);
        const retries = await Promise.all(keys.map((key) => submitMintRequest(api!.baseUrl, key)));
        keys.forEach((key, i) => {
          const retry = retries[i]!;
          const ok = 'status' in retry && retry.status === 200 && retry.body?.ok === true;
          outcomes.push({
            key,
            answeredBeforeKill: 'status' in first[i]!,
            jobId: ok ? retry.body.mint_job_id : undefined,
            duplicateFlag: ok && retry.body.is_duplicate === true,
          });
        });
        await api.kill();
      }

      const byKey = await jobsByKey();
      const lost = outcomes.filter((o) => o.jobId === undefined || byKey.get(o.key)?.[0] !== o.jobId).length;
      const duplicates = outcomes.filter((o) => (byKey.get(o.key)?.length ?? 0) > 1).length;
      report('api-kill Connect SubmitMintRequest', {
        trials: faultTrials,
        requests: outcomes.length,
        answeredBeforeKill: outcomes.filter((o) => o.answeredBeforeKill).length,
        lost,
        duplicates,
        retriesFlaggedDuplicate: outcomes.filter((o) => o.duplicateFlag).length,
      });
      expect(outcomes.filter((o) => o.answeredBeforeKill)).toEqual([]);
      expect(lost).toBe(0);
      expect(duplicates).toBe(0);
      expect(outcomes.filter((o) => !o.duplicateFlag)).toEqual([]);
    },
    scenarioTimeoutMs(60_000, 15_000),
  );
});
