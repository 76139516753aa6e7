// Several replicas, one truth: two API processes and two executors (real processes on free ports)
// on one PostgreSQL reached through PgBouncer in transaction pooling mode (DATABASE_URL), with the
// session-level connections on DATABASE_DIRECT_URL, and one NATS stream; packs live in the NATS
// Object Store (the production default), so no process shares a folder with another. Submit through API 1,
// watch through API 2, download through API 2 a pack executor 1 wrote, and see a link change made
// through API 1 answered by API 2 within a second.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ActivationMode, IdentityMode, MintJobStatus, MintService, PayloadPackStatus, ResolverService } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { freePort } from '../support/ports.ts';
import { query } from '../support/sql.ts';
import { setupUseCases, testJwtSecret, testWebhookSecretKeys, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { untar } from '../support/untar.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
  readonly lines: string[];
  stop(): Promise<void>;
}

let app: UseCaseBundle;
let brand: SeededBrand;
let bouncer: PgBouncer;
let env: Record<string, string>;
const replicas: Replica[] = [];

/** Starts `services/<service>/src/main.ts` and waits until its /readyz answers 200. */
async function start(service: 'api' | 'executor', name: string): Promise<Replica> {
  const port = await freePort();
  const child = spawn(process.execPath, [`services/${service}/src/main.ts`], {
    cwd: repoRoot,
    env: { ...env, ...(service === 'api' ? { PORT: String(port) } : { EXECUTOR_HTTP_PORT: String(port) }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = once(child, 'exit');
  const replica: Replica = {
    name,
    child,
    port,
    lines,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  replicas.push(replica);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited at start:\n${lines.join('\n')}`);
    if (
      await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return replica;
    if (Date.now() > deadline) throw new Error(`${name} not ready after 30 s:\n${lines.join('\n')}`);
    await sleep(50);
  }
}

const auth = () => ({ headers: { authorization: `Bearer ${brand.token}` } });
const clients = (replica: Replica) => {
  const transport = createConnectTransport({ baseUrl: `http://127.0.0.1:${replica.port}`, httpVersion: '2' });
  return { mint: createClient(MintService, transport), resolver: createClient(ResolverService, transport) };
};

async function watchToEnd(mint: Client<typeof MintService>, mintJobId: string) {
  const seen = [];
  for await (const update of mint.watchMintJob({ brandId: brand.brandId, mintJobId }, auth())) seen.push(update);
  return seen;
}

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  bouncer = await startPgBouncer(app.database.url);
  const names = freshStreamNames();
  env = {
    PATH: process.env['PATH'] ?? '',
    DATABASE_URL: bouncer.pooled(app.database.url),
    DATABASE_DIRECT_URL: app.database.url,
    NATS_URL: testInfra().natsUrl,
    NATS_STREAM: names.stream,
    NATS_SUBJECT_PREFIX: names.subjectPrefix,
    AUTH_JWT_SECRET: testJwtSecret,
    DOWNLOAD_SIGNING_KEYS: `k1:${Buffer.alloc(32, 9).toString('base64')}`,
    WEBHOOK_SECRET_KEYS: testWebhookSecretKeys,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PUBLIC_BASE_URL: 'http://127.0.0.1:8080',
    MINT_CHUNK_SIZE: '500',
    EXECUTOR_LEASE_MS: '3000',
    NATS_ACK_WAIT_MS: '5000',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await bouncer?.stop();
  await app?.close();
});

describe('two API processes and two executors through PgBouncer', () => {
  it('submit on API 1, watch on API 2, download on API 2 what executor 1 wrote, link changes seen across replicas within a second', async () => {
    const [api1, api2] = [await start('api', 'api 1'), await start('api', 'api 2')];
    const executor1 = await start('executor', 'executor 1');
    const one = clients(api1);
    const two = clients(api2);

    // Submit through API 1 while only executor 1 runs; watch through API 2 (pushed progress).
    const submitted = await one.mint.submitMintRequest(
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity: 3_000,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
      },
      auth(),
    );
    expect(submitted.ok).toBe(true);
    const seen = await watchToEnd(two.mint, submitted.mintJobId!);
    expect(seen.at(-1)).toMatchObject({ status: MintJobStatus.COMPLETED, done: true, mintedQuantity: 3_000 });

    // The pack executor 1 wrote, downloaded through API 2.
    let pack: { id: string; status: PayloadPackStatus } | undefined;
    const deadline = Date.now() + 20_000;
    while (pack?.status !== PayloadPackStatus.READY && Date.now() < deadline) {
      const { packs } = await two.mint.listPayloadPacks({ brandId: brand.brandId }, auth());
      pack = packs.find((p) => p.mintBatchId === submitted.mintBatchId);
      await sleep(100);
    }
    expect(pack?.status).toBe(PayloadPackStatus.READY);
    const issued = await two.mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: pack!.id }, auth());
    const url = new URL(issued.url);
    const download = await fetch(`http://127.0.0.1:${api2.port}${url.pathname}${url.search}`);
    expect(download.status).toBe(200);
    const files = untar(Buffer.from(await download.arrayBuffer()));
    expect([...files.keys()].sort()).toEqual(['SHA256SUMS', 'epcis.json', 'manifest.json', 'units.csv', 'units.jsonl']);
    expect(files.get('units.csv')!.toString().trim().split('\n')).toHaveLength(3_001);

    // A second executor joins and the first leaves: the next job is minted by executor 2.
    await start('executor', 'executor 2');
    await executor1.stop();
    const again = await one.mint.submitMintRequest(
      {
        brandId: brand.brandId,
        productId: brand.productId,
        requestedQuantity: 1_000,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
      },
      auth(),
    );
    expect((await watchToEnd(two.mint, again.mintJobId!)).at(-1)).toMatchObject({ status: MintJobStatus.COMPLETED, mintedQuantity: 1_000 });

    // A link made through API 1 answers on API 2 within a second (its cache hears of it), and so does its change.
    const [{ serial }] = (await query<{ serial: string }>(app.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq limit 1', [
      submitted.mintBatchId,
    ])) as [{ serial: string }];
    const [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
    const path = `/r/${slug}/01/${brand.gtin}/21/${serial}?linkType=gs1:instructions`;
    const location = async () => (await fetch(`http://127.0.0.1:${api2.port}${path}`, { redirect: 'manual' })).headers.get('location');
    const manual = 'https://acme.example/manual?v=1';
    const within = async (check: (answer: string | null) => boolean): Promise<number> => {
      const changed = Date.now();
      while (!check(await location()) && Date.now() - changed < 1_000) await sleep(20);
      expect(check(await location())).toBe(true);
      return Date.now() - changed;
    };
    expect(await location()).not.toBe(manual);
    const { link } = await one.resolver.upsertLink(
      { brandId: brand.brandId, gtin: brand.gtin, linkType: 'gs1:instructions', href: manual, title: 'Manual' },
      auth(),
    );
    expect(await within((answer) => answer === manual)).toBeLessThan(1_000);
    await one.resolver.deleteLink({ brandId: brand.brandId, linkId: link!.id }, auth());
    expect(await within((answer) => answer !== manual)).toBeLessThan(1_000);
    // Every replica worked through the pooler: its log holds no error.
    for (const replica of replicas)
      expect(
        replica.lines.filter((l) => /"level":(50|60)/.test(l)),
        replica.name,
      ).toEqual([]);
  }, 120_000);
});
