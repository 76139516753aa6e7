// The service on a real Citus: `mintctl migrate` lays the schema out (tenant tables distributed by
// brand_id and co-located, reference tables), then a brand mints CITUS_UNITS units (10,000 by
// default, 100,000 for the size) through a real executor, reads them back
// (GetMintBatch, ListMintUnits), gets its payload pack and a webhook, resolves a minted unit (the
// scan recorded), sees a link change reach the resolver through NOTIFY on the coordinator, and
// imports products whose passport pages become links, moves a range of serials along their
// lifecycle (recalled, with EPCIS events and a balanced reconciliation), ingests and reads scans
// of an edge, publishes a passport whose credential an API serves to a machine (JSON-LD and a
// signed vc+jwt), and hears a rename, a publish and a void on the change feed. Each step prints
// its time.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '@mint/bus';
import { distributedTables, openDatabase, referenceTables, type Database } from '@mint/db';
import { parseResolverRequest, type Cursor, type ResolverPath } from '@mint/domain';
import { createLogger } from '@mint/runtime';
import { createFsPackStore } from '@mint/store';
import {
  createResolver,
  createScanRecorder,
  createUseCaseContext,
  createUser,
  createWebhookEndpoint,
  createWebhookSender,
  createWorkspace,
  getJobProgress,
  getMintBatch,
  getProductImport,
  getScanStats,
  grantRole,
  listMintUnits,
  listPassportVersions,
  moveSerials,
  publishPassport,
  reconcileMintBatch,
  recordScanEvents,
  setMintBatchStatus,
  startProductImport,
  submitMintRequest,
  updatePassportDraft,
  upsertLink,
  upsertProduct,
  type UseCaseContext,
} from '@mint/usecases';
import { startApi } from '../../services/api/src/start.ts';
import { startExecutor } from '../../services/executor/src/executor.ts';
import { query } from '../support/sql.ts';
import { nextGtin, testJwtSecret } from '../support/usecases.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { freshCitusDatabase, type CitusDatabase } from './support.ts';

const units = Number(process.env['CITUS_UNITS'] ?? 10_000);
const timings: string[] = [];
function timed(label: string, started: number, extra = ''): void {
  timings.push(`${label}=${Math.round(performance.now() - started)}ms${extra}`);
}

let citus: CitusDatabase;
let db: Database;
let ctx: UseCaseContext;
let receiver: WebhookReceiver;
let packDir: string;
let executor: ReturnType<typeof startExecutor>;
const bus = createMemoryBus();
let brand: { id: string; slug: string; userId: string; productId: string; gtin: string };
let minted: { jobId: string; batchId: string };

/** Runs `mintctl migrate` against `url` and returns what it printed. */
function mintctlMigrate(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['services/cli/src/main.ts', 'migrate'], {
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`mintctl migrate exited ${code}: ${out}`))));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function serialPath(serial: string): ResolverPath {
  const parsed = parseResolverRequest(`/r/${brand.slug}/01/${brand.gtin}/21/${serial}`);
  if (parsed.kind !== 'identity') throw new Error(`not an identity: ${serial}`);
  return parsed.path;
}

beforeAll(async () => {
  citus = await freshCitusDatabase(process.env['CITUS_URL']!);
  receiver = await startWebhookReceiver();
  packDir = await mkdtemp(join(tmpdir(), 'citus-packs-'));
});
afterAll(async () => {
  await executor?.stop();
  await bus.close();
  await db?.close(true);
  await receiver?.close();
  if (packDir !== undefined) await rm(packDir, { recursive: true, force: true });
  await citus?.drop();
  console.log(`citus: units=${units} workers=${citus?.workers} ${timings.join(' ')}`);
});

describe('on Citus (a coordinator and its workers)', () => {
  it('mintctl migrate distributes every tenant table by brand_id, co-located, and makes the reference tables; again, it changes nothing', async () => {
    const started = performance.now();
    const printed = await mintctlMigrate(citus.url);
    timed('migrate', started);
    expect(printed).toContain(`citus: ${distributedTables.length} table(s) distributed by brand_id, ${referenceTables.length} reference table(s) created`);
    db = await openDatabase({ url: citus.url }, { poolSize: 8 });
    ctx = createUseCaseContext({
      db,
      publicBaseUrl: 'http://127.0.0.1:8080',
      jwtSecret: testJwtSecret,
      webhookSecretKeys: [{ id: 'w1', secret: new Uint8Array(Buffer.alloc(32, 8)) }],
    });
    const layout = await query<{ name: string; kind: string; column: string | null; colocation: number }>(
      db.em.fork(),
      `select logicalrelid::regclass::text as name, partmethod as kind, column_to_column_name(logicalrelid, partkey) as column, colocationid as colocation
       from pg_dist_partition where not (select relispartition from pg_class where oid = logicalrelid) order by 1`,
    );
    const distributed = layout.filter((t) => t.kind === 'h');
    // Every table of the one list (packages/db/src/distribution.ts), and only those.
    expect(distributed.map((t) => t.name).sort()).toEqual([...distributedTables].sort());
    expect(new Set(distributed.map((t) => t.column))).toEqual(new Set(['brand_id']));
    expect(new Set(distributed.map((t) => t.colocation)).size).toBe(1);
    expect(
      layout
        .filter((t) => t.kind === 'n')
        .map((t) => t.name)
        .sort(),
    ).toEqual([...referenceTables].sort());
    // The shards are spread over every worker.
    const [{ nodes }] = (await query<{ nodes: string }>(
      db.em.fork(),
      `select count(distinct nodeport)::text as nodes from citus_shards where citus_table_type = 'distributed'`,
    )) as [{ nodes: string }];
    expect(Number(nodes)).toBe(citus.workers);
    expect(await mintctlMigrate(citus.url)).toContain('citus: 0 table(s) distributed by brand_id, 0 reference table(s) created');
  });

  it(`mints ${units.toLocaleString('en')} units through an executor, with the payload pack and a webhook delivered`, async () => {
    const workspace = await createWorkspace(ctx, { name: 'Citus Brand', apiAccessEnabled: true });
    const user = await createUser(ctx, { email: `owner-${workspace.slug}@citus.example`, name: 'Owner' });
    await grantRole(ctx, workspace.id, user.id, 'owner');
    const gtin = nextGtin();
    const { product } = await upsertProduct(
      ctx,
      { id: user.id },
      {
        brandId: workspace.id,
        sku: 'SKU-1',
        name: 'Product One',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: 'https://citus.example/p1',
      },
    );
    brand = { id: workspace.id, slug: workspace.slug, userId: user.id, productId: product.id, gtin };
    await createWebhookEndpoint(
      ctx,
      { id: user.id },
      { allowLoopback: true },
      { brandId: brand.id, url: receiver.url('/hook'), eventTypes: [], description: 'citus' },
    );
    executor = startExecutor({
      ctx,
      bus,
      logger: pino({ level: process.env['CITUS_LOG'] ?? 'silent' }),
      concurrency: 1,
      chunkSize: 5_000,
      writers: 2,
      relayIntervalMs: 20,
      sweepIntervalMs: 1_000,
      packStore: createFsPackStore(packDir),
      packPollIntervalMs: 100,
      webhooks: { send: createWebhookSender({ allowLoopback: true, allowedAddresses: [] }), concurrency: 2, perEndpoint: 1, pollIntervalMs: 100 },
    });
    let started = performance.now();
    const submitted = await submitMintRequest(
      ctx,
      { id: user.id },
      {
        brandId: brand.id,
        productId: brand.productId,
        productBatchId: null,
        requestedQuantity: units,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: null,
      },
    );
    if (!submitted.ok) throw new Error(`blocked: ${submitted.blockingReasons.map((r) => r.code).join(', ')}`);
    timed('submit', started);
    minted = { jobId: submitted.mintJobId, batchId: submitted.mintBatchId };
    started = performance.now();
    await until('the job', async () => (await getJobProgress(ctx, brand.id, minted.jobId)).status === 'COMPLETED', 240_000);
    const mintMs = performance.now() - started;
    timed('mint', started, ` (${Math.round(units / (mintMs / 1000))} units/s)`);
    const [{ n }] = (await query<{ n: string }>(db.em.fork(), 'select count(*)::text as n from mint_units where brand_id = ? and mint_batch_id = ?', [
      brand.id,
      minted.batchId,
    ])) as [{ n: string }];
    expect(Number(n)).toBe(units);
    started = performance.now();
    await until(
      'the pack',
      async () =>
        (
          await query<{ status: string }>(db.em.fork(), 'select status from payload_packs where brand_id = ? and mint_batch_id = ?', [brand.id, minted.batchId])
        )[0]?.status === 'ready',
    );
    timed('pack', started);
    started = performance.now();
    await until('a webhook', async () => receiver.received.length > 0, 60_000);
    timed('webhook', started);
    expect(JSON.parse(receiver.received[0]!.body)).toHaveProperty('type');
  });

  it("reads the batch (GetMintBatch) and pages through its units (ListMintUnits) on the brand's shard", async () => {
    let started = performance.now();
    const batch = await getMintBatch(ctx, brand.id, minted.batchId);
    timed('getMintBatch', started);
    expect(batch).toMatchObject({ id: minted.batchId, mintedQuantity: units, status: 'minted' === batch.status ? 'minted' : batch.status });
    expect(batch.mintedQuantity).toBe(units);
    started = performance.now();
    const seen = new Set<string>();
    let cursor: Cursor | null = null;
    for (let page = 0; page < 20; page++) {
      const result = await listMintUnits(ctx, brand.id, { limit: 100, cursor, mintBatchId: minted.batchId });
      for (const unit of result.items) seen.add(unit.id);
      cursor = result.next;
      if (cursor === null) break;
    }
    timed('listMintUnits20pages', started);
    expect(seen.size).toBe(Math.min(units, 2_000));
  });

  it('answers a repeated idempotency key with the first job, one job written (the routed submit in its transaction)', async () => {
    const key = randomUUID();
    const request = {
      brandId: brand.id,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity: 5,
      identityMode: 'serial' as const,
      activationMode: 'active_at_mint' as const,
      lots: [],
      idempotencyKey: key,
    };
    const first = await submitMintRequest(ctx, { id: brand.userId }, request);
    const second = await submitMintRequest(ctx, { id: brand.userId }, request);
    if (!first.ok || !second.ok) throw new Error('blocked');
    expect(second.mintJobId).toBe(first.mintJobId);
    const [{ n }] = (await query<{ n: string }>(db.em.fork(), 'select count(*)::text as n from mint_jobs where brand_id = ? and idempotency_key = ?', [
      brand.id,
      key,
    ])) as [{ n: string }];
    expect(n).toBe('1');
    await until('the keyed job', async () => (await getJobProgress(ctx, brand.id, first.mintJobId)).status === 'COMPLETED');
  });

  it('resolves a minted unit (the scan recorded) and serves a link change within a second in every resolver, through NOTIFY on the coordinator', async () => {
    const recorder = createScanRecorder(ctx, { flushIntervalMs: 50 });
    const resolver = createResolver(ctx, { recorder });
    // A second resolver, as another API process has: its own cache and its own LISTEN connection.
    const other = createResolver(ctx);
    try {
      await resolver.listening;
      await other.listening;
      const [{ serial }] = (await query<{ serial: string }>(
        db.em.fork(),
        'select serial from mint_units where brand_id = ? and mint_batch_id = ? order by seq limit 1',
        [brand.id, minted.batchId],
      )) as [{ serial: string }];
      let started = performance.now();
      expect((await resolver.resolve(serialPath(serial), 'redirect')).link?.href).toBe('https://citus.example/p1');
      timed('scan', started);
      expect((await other.resolve(serialPath(serial), 'redirect')).link?.href).toBe('https://citus.example/p1');
      started = performance.now();
      await upsertLink(
        ctx,
        { id: brand.userId },
        {
          brandId: brand.id,
          gtin: brand.gtin,
          lot: null,
          serial: null,
          linkType: 'gs1:pip',
          href: 'https://citus.example/p2',
          title: 'New page',
          hreflang: [],
          mediaType: null,
          context: [],
          fwqs: true,
          isDefault: true,
        },
      );
      let href: string | undefined;
      while (href !== 'https://citus.example/p2' && performance.now() - started < 1_000) {
        href = (await resolver.resolve(serialPath(serial), 'redirect')).link?.href;
        if (href !== 'https://citus.example/p2') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      timed('linkChangeSeen', started);
      expect(href).toBe('https://citus.example/p2');
      let otherHref: string | undefined;
      while (otherHref !== 'https://citus.example/p2' && performance.now() - started < 1_000) {
        otherHref = (await other.resolve(serialPath(serial), 'redirect')).link?.href;
        if (otherHref !== 'https://citus.example/p2') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(otherHref).toBe('https://citus.example/p2');
    } finally {
      await other.close();
      await resolver.close();
      await recorder.close();
    }
    const [{ n }] = (await query<{ n: string }>(db.em.fork(), 'select count(*)::text as n from scan_events where brand_id = ?', [brand.id])) as [{ n: string }];
    expect(Number(n)).toBeGreaterThan(0);
  });

  it("imports 1,000 products, each passport page becoming its GTIN's default gs1:pip link", async () => {
    const rows = Array.from({ length: 1_000 }, (_, i) => `IMP-${i},Imported ${i},${nextGtin()},ACTIVE,READY,https://citus.example/imp/${i}`);
    const csv = Buffer.from(`sku,name,gtin,commercial_status,mint_readiness_status,passport_url\n${rows.join('\n')}\n`);
    const started = performance.now();
    // The executor's import worker runs it (the job travels through the outbox).
    const view = await startProductImport(ctx, { id: brand.userId }, brand.id, csv);
    await until('the import', async () => ['COMPLETED', 'FAILED'].includes((await getProductImport(ctx, brand.id, view.id)).status));
    timed('import1000', started);
    expect(await getProductImport(ctx, brand.id, view.id)).toMatchObject({ status: 'COMPLETED', importedRows: 1_000, failedRows: 0 });
    const [{ n }] = (await query<{ n: string }>(
      db.em.fork(),
      `select count(*)::text as n from resolver_links where brand_id = ? and level = 'gtin' and link_type = 'pip' and is_default and href like 'https://citus.example/imp/%'`,
      [brand.id],
    )) as [{ n: string }];
    expect(Number(n)).toBe(1_000);
  });

  it("decommissions a seq range as recalled in chunks on the brand's shard: counted exactly, one EPCIS event set, the reconciliation balanced, the resolver leading with the recall", async () => {
    const recalled = Math.min(units, 3_000);
    const started = performance.now();
    const moved = await moveSerials(
      ctx,
      { id: brand.userId },
      {
        brandId: brand.id,
        action: 'decommission',
        reason: 'recalled',
        idempotencyKey: `recall-${minted.batchId}`,
        target: { mintBatchId: minted.batchId, fromSeq: 1, toSeq: recalled },
      },
      { runAll: true },
    );
    timed('recall', started, ` (${recalled} units)`);
    expect(moved).toMatchObject({ status: 'done', total: recalled, moved: recalled, refused: 0 });
    // A repeat of the key moves nothing.
    const again = await moveSerials(
      ctx,
      { id: brand.userId },
      {
        brandId: brand.id,
        action: 'decommission',
        reason: 'recalled',
        idempotencyKey: `recall-${minted.batchId}`,
        target: { mintBatchId: minted.batchId, fromSeq: 1, toSeq: recalled },
      },
      { runAll: true },
    );
    expect(again).toMatchObject({ replayed: true, moved: recalled });
    const reconciliation = await reconcileMintBatch(ctx, brand.id, minted.batchId);
    expect(reconciliation).toMatchObject({ requested: units, minted: units, notMinted: 0, balanced: true });
    expect(reconciliation.byState).toMatchObject({ commissioned: units - recalled, decommissioned: recalled });
    expect(reconciliation.byReason).toEqual({ recalled });
    const [{ epcs }] = (await query<{ epcs: string }>(
      db.em.fork(),
      `select coalesce(sum(jsonb_array_length(body->'epcList')), 0)::text as epcs from epcis_events where brand_id = ? and body->>'bizStep' = 'decommissioning'`,
      [brand.id],
    )) as [{ epcs: string }];
    expect(Number(epcs)).toBe(recalled);
    const [{ serial }] = (await query<{ serial: string }>(db.em.fork(), 'select serial from mint_units where brand_id = ? and mint_batch_id = ? and seq = 1', [
      brand.id,
      minted.batchId,
    ])) as [{ serial: string }];
    const resolver = createResolver(ctx);
    try {
      await resolver.listening;
      expect((await resolver.resolve(serialPath(serial), 'json')).outcome.kind).toBe('recalled');
    } finally {
      await resolver.close();
    }
  });

  it("ingests an edge's batch of scans once (a replayed key writes nothing) and reads them back per country", async () => {
    const [{ serial }] = (await query<{ serial: string }>(
      db.em.fork(),
      'select serial from mint_units where brand_id = ? and mint_batch_id = ? order by seq desc limit 1',
      [brand.id, minted.batchId],
    )) as [{ serial: string }];
    const at = new Date();
    const scans = Array.from({ length: 500 }, (_, i) => ({
      scannedAt: new Date(at.getTime() - i * 1_000),
      kind: 'serial',
      gtin: brand.gtin,
      identifier: serial,
      lot: null,
      outcome: 'resolved',
      representation: 'redirect',
      linkType: null,
      country: i % 2 === 0 ? 'DE' : 'FR',
      clientClass: 'browser',
      visitor: null,
      count: 1,
    }));
    const started = performance.now();
    const first = await recordScanEvents(ctx, { brandId: brand.id, batchKey: `edge-${minted.batchId}`, scans });
    timed('ingest500', started);
    expect(first).toMatchObject({ accepted: 500 });
    await recordScanEvents(ctx, { brandId: brand.id, batchKey: `edge-${minted.batchId}`, scans });
    const byCountry = await getScanStats(ctx, {
      brandId: brand.id,
      groupBy: 'country',
      from: new Date(at.getTime() - 86_400_000),
      to: new Date(at.getTime() + 60_000),
      order: 'key',
      serial,
      limit: 10,
    });
    expect(Object.fromEntries(byCountry.groups.map((r) => [r.key, r.scans]))).toEqual({ DE: 250, FR: 250 });
  });
  it("publishes a passport on the brand's shard and serves its credential to a machine: JSON-LD, and a vc+jwt that verifies against the resolver's did.json", async () => {
    const owner = { id: brand.userId };
    const content = {
      description: { en: 'Traction battery 300 Ah' },
      manufacturer: { name: 'Example Cells GmbH', id: 'https://example.com/company/42' },
      emissions: { carbonFootprint: 61.5, declaredUnit: 'EA', operationalScope: 'CradleToGate', primarySourcedRatio: 0.4, method: 'EU 2023/1542 Annex II' },
      materials: [{ name: { en: 'Cobalt' }, massFraction: 0.2, hazardous: true }],
      access: { materials: 'authority' },
    };
    let started = performance.now();
    await updatePassportDraft(ctx, owner, { brandId: brand.id, productId: brand.productId, lot: null, serial: null, content, expectedRevision: 0 });
    const published = await publishPassport(ctx, owner, { brandId: brand.id, productId: brand.productId, lot: null, serial: null });
    timed('passportPublish', started);
    expect(published).toMatchObject({ published: true, version: { version: 1 } });
    // A repeated publish of the same draft writes nothing and answers that version.
    expect(await publishPassport(ctx, owner, { brandId: brand.id, productId: brand.productId, lot: null, serial: null })).toMatchObject({
      published: false,
      version: { version: 1 },
    });
    expect(
      await listPassportVersions(ctx, { brandId: brand.id, productId: brand.productId, lot: null, serial: null, limit: null, before: null }),
    ).toMatchObject({ versions: [{ version: 1, sha256: published.version.sha256 }] });

    const [{ serial }] = (await query<{ serial: string }>(
      db.em.fork(),
      'select serial from mint_units where brand_id = ? and mint_batch_id = ? order by seq desc limit 1',
      [brand.id, minted.batchId],
    )) as [{ serial: string }];
    const api = await startApi({
      ctx,
      config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
      logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
      readiness: async () => ({ ok: true, checks: {} }),
    });
    try {
      const url = `http://127.0.0.1:${api.port}/r/${brand.slug}/01/${brand.gtin}/21/${serial}`;
      started = performance.now();
      const ld = await fetch(url, { headers: { accept: 'application/ld+json' }, redirect: 'manual' });
      timed('credentialLd', started);
      expect([ld.status, ld.headers.get('content-type')]).toEqual([200, 'application/ld+json']);
      const credential = (await ld.json()) as Record<string, any>;
      expect(credential['type']).toContain('DigitalProductPassport');
      expect(credential['credentialSubject'].product).toMatchObject({ serialNumber: serial, registeredId: brand.gtin, description: 'Traction battery 300 Ah' });
      // The authority's section is not shown to the public.
      expect(JSON.stringify(credential)).not.toContain('Cobalt');

      started = performance.now();
      const jwt = await fetch(url, { headers: { accept: 'application/vc+jwt' }, redirect: 'manual' });
      timed('credentialJwt', started);
      expect([jwt.status, jwt.headers.get('content-type')]).toEqual([200, 'application/vc+jwt']);
      const jws = await jwt.text();
      const header = decodeProtectedHeader(jws);
      const doc = (await (await fetch(`http://127.0.0.1:${api.port}/.well-known/did.json`)).json()) as {
        verificationMethod: { id: string; publicKeyJwk: JWK }[];
      };
      const method = doc.verificationMethod.find((m) => m.id === header.kid);
      expect(method, 'the signing key is listed in did.json').toBeDefined();
      const { payload } = await compactVerify(jws, await importJWK(method!.publicKeyJwk, 'EdDSA'));
      const signed = JSON.parse(new TextDecoder().decode(payload)) as Record<string, any>;
      expect(signed['credentialSubject'].product.serialNumber).toBe(serial);
      expect(signed['credentialStatus']).toMatchObject({ type: 'BitstringStatusListEntry', statusPurpose: 'revocation' });
    } finally {
      await api.close();
    }
  });
  it('announces a product rename, a passport publish and a voided batch on the change feed from the coordinator (what purges a caching proxy in front)', async () => {
    const heard: string[] = [];
    const resolver = createResolver(ctx, { onLinkChange: (brandId, gtin) => heard.push(`${brandId} ${gtin}`) });
    const owner = { id: brand.userId };
    /** Runs `change` and waits (1 s at most) for the resolver to hear of the brand's GTIN. */
    const heardAfter = async (label: string, change: () => Promise<unknown>) => {
      heard.length = 0;
      const started = performance.now();
      await change();
      await until(`${label} on the change feed`, async () => heard.includes(`${brand.id} ${brand.gtin}`), 1_000);
      timed(label, started);
    };
    try {
      await resolver.listening;
      await heardAfter('renameHeard', () =>
        upsertProduct(ctx, owner, {
          brandId: brand.id,
          sku: 'SKU-1',
          name: 'Product One, renamed',
          gtin: brand.gtin,
          commercialStatus: 'ACTIVE',
          mintReadinessStatus: 'READY',
          passportUrl: 'https://citus.example/p1',
        }),
      );
      await heardAfter('publishHeard', async () => {
        await updatePassportDraft(ctx, owner, {
          brandId: brand.id,
          productId: brand.productId,
          lot: null,
          serial: null,
          content: { description: { en: 'Traction battery 310 Ah' } },
          expectedRevision: null,
        });
        await publishPassport(ctx, owner, { brandId: brand.id, productId: brand.productId, lot: null, serial: null });
      });
      await heardAfter('voidHeard', () =>
        setMintBatchStatus(ctx, owner, { brandId: brand.id, mintBatchId: minted.batchId, status: 'voided', reason: 'labels misprinted' }),
      );
    } finally {
      await resolver.close();
    }
  });
});
