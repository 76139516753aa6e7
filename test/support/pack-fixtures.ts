// Minting helpers for the pack, download and resolver tests: submit a job and run it to completion
// through the real processing use case.

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ActivationMode, IdentityMode } from '@mint/domain';
import type { PackStore } from '@mint/store';
import {
  claimPayloadPack,
  createPayloadPack,
  createPayloadPackDownloadUrl,
  generatePayloadPack,
  openPayloadPackDownload,
  processMintJobBatch,
  submitMintRequest,
  type DownloadSettings,
  type PackClaim,
  type PackGenerationResult,
  type PackManifest,
  type UseCaseContext,
} from '@mint/usecases';
import { query, run, unitsWithUrls } from './sql.ts';
import type { SeededBrand } from './usecases.ts';

/** Submits a job for the brand's product and runs it to completion in cycles of `chunk` units. */
export async function mintCompleted(
  ctx: UseCaseContext,
  brand: SeededBrand,
  quantity: number,
  options: { activationMode?: ActivationMode; identityMode?: IdentityMode; lots?: { lotCode: string; qty: number }[]; chunk?: number } = {},
): Promise<{ mintJobId: string; mintBatchId: string }> {
  const result = await submitMintRequest(
    ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity: quantity,
      identityMode: options.identityMode ?? 'serial',
      activationMode: options.activationMode ?? 'active_at_mint',
      lots: options.lots ?? [],
      idempotencyKey: null,
    },
  );
  if (!result.ok) throw new Error(`mint blocked: ${JSON.stringify(result.blockingReasons)}`);
  for (let i = 0; i < 1000; i++) {
    if ((await processMintJobBatch(ctx, brand.brandId, result.mintJobId, options.chunk ?? 10_000)).done) break;
  }
  return { mintJobId: result.mintJobId, mintBatchId: result.mintBatchId };
}

/** A temporary folder for a pack store; `remove()` deletes it. */
export async function tempStoreDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mint-packs-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Claims packs until the one of `packId` comes up and generates it into `store`; the other packs
 * claimed on the way are put back to pending. Returns the generation's result.
 */
export async function generateOnly(ctx: UseCaseContext, store: PackStore, packId: string): Promise<PackGenerationResult> {
  const others: PackClaim[] = [];
  try {
    for (;;) {
      const claim = await claimPayloadPack(ctx);
      if (claim === null) throw new Error(`pack ${packId} was not claimable`);
      if (claim.id === packId) return await generatePayloadPack(ctx, claim, { store });
      others.push(claim);
    }
  } finally {
    for (const claim of others) {
      await run(ctx.db.em.fork(), `update payload_packs set status = 'pending', lease_expires_at = null where brand_id = ? and id = ?`, [
        claim.brandId,
        claim.id,
      ]);
    }
  }
}

/** The packs of a batch, oldest first, with their purpose. */
export async function packsOfBatch(ctx: UseCaseContext, batchId: string): Promise<{ id: string; purpose: string; status: string }[]> {
  return query(ctx.db.em.fork(), `select id, purpose, status from payload_packs where mint_batch_id = ? order by created_at, id`, [batchId]);
}

/** The EPCIS 2.0 JSON Schema vendored in packages/usecases/src/lifecycle/epcis-2.0 (the one capture checks documents against), compiled with ajv (draft-07, with formats). */
export function epcisValidator(): ValidateFunction {
  const schema = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../packages/usecases/src/lifecycle/epcis-2.0/EPCIS-JSON-Schema.json', import.meta.url)), 'utf8'),
  ) as object;
  const ajv = new Ajv({ strict: false, allErrors: true });
  // ajv-formats is CommonJS: its default export is the plugin function at run time.
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv.compile(schema);
}

/**
 * Downloads a ready pack as its user does: issues a signed URL, answers it through
 * openPayloadPackDownload (the /downloads route's use case), unpacks the streamed tar with
 * `tar -x` into a new folder and runs `sha256sum -c SHA256SUMS` there. Returns the folder, the
 * manifest and sha256sum's output; throws when a checksum fails.
 */
export async function downloadAndVerify(
  ctx: UseCaseContext,
  settings: DownloadSettings,
  brandId: string,
  packId: string,
): Promise<{ dir: string; manifest: PackManifest; check: string }> {
  const issued = await createPayloadPackDownloadUrl(ctx, settings, { brandId, packId, ttlSeconds: null });
  const url = new URL(issued.url);
  const answer = await openPayloadPackDownload(ctx, settings, {
    method: 'GET',
    path: url.pathname,
    exp: url.searchParams.get('exp'),
    kid: url.searchParams.get('kid'),
    sig: url.searchParams.get('sig'),
  });
  if (answer.kind !== 'file') throw new Error(`download answered ${answer.kind}`);
  const dir = await mkdtemp(join(tmpdir(), 'mint-pack-download-'));
  const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'inherit'] });
  await Promise.all([pipeline(answer.stream(), tar.stdin), once(tar, 'exit')]);
  if (tar.exitCode !== 0) throw new Error(`tar exited with ${tar.exitCode}`);
  const check = execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir, encoding: 'utf8' });
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as PackManifest;
  return { dir, manifest, check };
}

/** What {@link serialPackRoundTrip} measured and checked. */
export interface RoundTrip {
  readonly formats: readonly string[];
  readonly units: number;
  readonly generateSeconds: number;
  /** Peak RSS of this process while the pack was generated, sampled every 20 ms. */
  readonly peakRssMb: number;
  readonly check: string;
  readonly manifest: PackManifest;
}

/**
 * A serial batch of `units` units minted through the real processing use case, a pack of the
 * streamed formats this build can write among ZPL and EPCIS asked for with CreatePayloadPack,
 * generated, downloaded and verified with `sha256sum -c`; then the EPCIS file's EPCs are counted
 * line by line (one event a line) and compared with the batch's units (count, distinct, first and
 * last), and ZPL labels counted. The downloaded folder is removed.
 */
export async function serialPackRoundTrip(
  ctx: UseCaseContext,
  brand: SeededBrand,
  store: PackStore,
  keys: DownloadSettings['keys'],
  units: number,
): Promise<RoundTrip> {
  const { mintBatchId } = await mintCompleted(ctx, brand, units, { chunk: 20_000 });
  const formats = ['zpl', 'epcis'] as const;
  const pack = await createPayloadPack(ctx, { brandId: brand.brandId, mintBatchId, formats, seqFrom: null, seqTo: null, symbology: null, layout: null });
  global.gc?.();
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  const result = await generateOnly(ctx, store, pack.id);
  const generateSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (result.kind !== 'ready') throw new Error(`pack generation ended ${JSON.stringify(result)}`);
  const { dir, manifest, check } = await downloadAndVerify(ctx, { keys, store }, brand.brandId, pack.id);
  try {
    const [first] = await query<{ resolver_url: string }>(ctx.db.em.fork(), `select resolver_url from ${unitsWithUrls} where mint_batch_id = ? and seq = 1`, [
      mintBatchId,
    ]);
    const [last] = await query<{ resolver_url: string }>(ctx.db.em.fork(), `select resolver_url from ${unitsWithUrls} where mint_batch_id = ? and seq = ?`, [
      mintBatchId,
      units,
    ]);
    let epcs = 0;
    let events = 0;
    const seen = new Set<string>();
    let firstEpc: string | undefined;
    let lastEpc: string | undefined;
    for await (const line of createInterface({ input: createReadStream(join(dir, 'epcis.json')) })) {
      if (!line.startsWith('{"type":"ObjectEvent"')) continue;
      const event = JSON.parse(line.replace(/,$/, '')) as { epcList: string[] };
      events++;
      for (const epc of event.epcList) {
        seen.add(epc);
        firstEpc ??= epc;
        lastEpc = epc;
      }
      epcs += event.epcList.length;
      if (event.epcList.length > 10_000) throw new Error(`an event lists ${event.epcList.length} EPCs`);
    }
    if (epcs !== units || seen.size !== units || firstEpc !== first?.resolver_url || lastEpc !== last?.resolver_url || events !== Math.ceil(units / 10_000)) {
      throw new Error(`epcis.json lists ${epcs} EPCs (${seen.size} distinct) in ${events} events for ${units} units`);
    }
    if (formats.includes('zpl')) {
      let labels = 0;
      for await (const line of createInterface({ input: createReadStream(join(dir, 'labels.zpl')) })) if (line.includes('^XA')) labels++;
      if (labels !== units) throw new Error(`labels.zpl holds ${labels} labels for ${units} units`);
    }
    return { formats, units, generateSeconds, peakRssMb: peakRss / 1024 / 1024, check, manifest };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
