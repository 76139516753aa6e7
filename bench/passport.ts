// `npm run bench:passport`: the hosted passport against the unit redirect, measured in the same
// run on the same API process (a child, so its CPU is its own). Seeds a scratch database with a
// brand, a product whose units redirect to its external passport URL and a product with a
// published passport (model, lot and unit levels), BENCH_UNITS units each (default 200). Then, at
// BENCH_RATE requests/s (default 1,000; the issue's figure is 5,000: BENCH_RATE=5000) over 10
// connections for BENCH_DURATION seconds (default 5), each of three rows over random units:
//   - unit redirect: a browser's scan of a unit of the first product -> 307 (the baseline),
//   - passport page: a browser's scan of a unit of the second -> 200 with its passport,
//   - credential: `Accept: application/vc+jwt` of the second -> 200, a signed UNTP credential,
// and prints each row's p50/p99 and the API's CPU per answer (from /proc), with their ratios to
// the redirect's. Then item credential signing: the signer over distinct credentials (none cached)
// against a bare Ed25519 sign loop (node:crypto) of payloads of the same size. Drops the database.
// BENCH_CPU_PROF=dir writes the API child's CPU profile (node --cpu-prof) into dir; BENCH_JSON names a file
// for the figures (bench/run.ts reads it). bench/resolver.ts reuses the seeding and the signing loop.

import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { openDatabase, type Database } from '@mint/db';
import {
  createPassportSigner,
  createUseCaseContext,
  createUser,
  createWorkspace,
  grantRole,
  importPassports,
  upsertProduct,
  type UseCaseContext,
} from '@mint/usecases';
import autocannon from 'autocannon';
import { mintCompleted } from '../test/support/pack-fixtures.ts';
import { query, setPassportUrl } from '../test/support/sql.ts';
import { percentile, spawnServer, stopServer } from './child-server.ts';
import { createScratchDatabase } from './scratch-database.ts';

const units = Number(process.env['BENCH_UNITS'] ?? 200);
const rate = Number(process.env['BENCH_RATE'] ?? 1_000);
const seconds = Number(process.env['BENCH_DURATION'] ?? 5);
const connections = 10;
/** BENCH_CPU_PROF=dir: the API child writes a V8 CPU profile (node --cpu-prof) into dir. */
const profile = process.env['BENCH_CPU_PROF'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`];
/** The webhook secret keys of the benchmarks' APIs (they seal the passport signing key), as WEBHOOK_SECRET_KEYS. */
export const benchSecretKeys = `b1:${Buffer.alloc(32, 3).toString('base64')}`;
const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** CPU ticks (user + system) a process used so far, from /proc. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function gtinOf(seed: number): string {
  const body = `0950600${String(seed).padStart(6, '0')}`;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(body[i]) * (i % 2 === 0 ? 3 : 1);
  return body + String((10 - (sum % 10)) % 10);
}

/** The example passport of docs/guides/passports.md: the model level every passport row shows. */
export function examplePassport(): Record<string, unknown> {
  return JSON.parse(
    readFileSync(new URL('../docs/guides/passports.md', import.meta.url), 'utf8')
      .split('```json\n')[1]!
      .split('\n```')[0]!,
  ) as Record<string, unknown>;
}

/**
 * A product of the brand with GTIN `gtin`, `count` minted units and a published passport (the
 * example model level, and a unit level of its own on the first unit): what a passport row scans.
 * Resolves to the units' serials.
 */
export async function seedPassportProduct(ctx: UseCaseContext, brandId: string, userId: string, gtin: string, count: number): Promise<string[]> {
  const productId = (
    await upsertProduct(
      ctx,
      { id: userId },
      {
        brandId,
        sku: `PASSPORT-${gtin}`,
        name: 'Bench passport product',
        gtin,
        commercialStatus: 'ACTIVE',
        mintReadinessStatus: 'READY',
        passportUrl: null,
      },
    )
  ).product.id;
  const batch = await mintCompleted(ctx, { brandId, userId, productId, gtin, token: '' }, count);
  const serials = (
    await query<{ serial: string }>(ctx.db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batch.mintBatchId])
  ).map((r) => r.serial);
  await importPassports(
    ctx,
    { id: userId },
    {
      brandId,
      publish: true,
      entries: [
        { productId, gtin: null, lot: null, serial: null, content: examplePassport() },
        {
          productId,
          gtin: null,
          lot: null,
          serial: serials[0]!,
          content: { extensions: [{ term: 'https://example.com/voc#stateOfHealth', name: { en: 'State of health' }, value: 97, unit: 'P1' }] },
        },
      ],
    },
  );
  return serials;
}

/** Item credential signing against a bare Ed25519 sign loop; see {@link benchItemSigning}. */
export interface SigningFigures {
  /** Credentials the project's signer signs per second (distinct ones: none kept), over all rounds. */
  readonly signerPerSecond: number;
  /** Signatures per second of a bare node:crypto Ed25519 loop over payloads of the same size, over all rounds. */
  readonly barePerSecond: number;
  /** signer / bare: the median of the rounds' ratios. */
  readonly ratio: number;
  /** The rounds' ratios (each round times both loops back to back, so a busy moment of the machine weighs on both). */
  readonly ratios: readonly number[];
  /** Bytes of the credential signed. */
  readonly payloadBytes: number;
}

/**
 * Item credential signing: the passport signer (keys sealed in `db`, WEBHOOK_SECRET_KEYS =
 * {@link benchSecretKeys}) over distinct item credentials (the example passport, none kept),
 * against a bare Ed25519 sign loop (node:crypto) over payloads of the same size, in this process:
 * `rounds` rounds of `n` signatures each, both loops back to back in each round.
 */
export async function benchItemSigning(db: Database, n = 250, rounds = 16): Promise<SigningFigures> {
  const [id, secret] = benchSecretKeys.split(':') as [string, string];
  const ctx = createUseCaseContext({
    db,
    publicBaseUrl: 'http://127.0.0.1:8080',
    jwtSecret: 'bench-secret-bench-secret-bench-secret-01',
    webhookSecretKeys: [{ id, secret: new Uint8Array(Buffer.from(secret, 'base64')) }],
  });
  const signer = createPassportSigner(ctx, { maxSigned: 1 });
  const credential = { ...examplePassport(), id: 'urn:bench:0' };
  await signer.sign(credential, 'did:web:127.0.0.1%3A8080');
  const { privateKey } = generateKeyPairSync('ed25519');
  const payload = Buffer.from(JSON.stringify(credential));
  let signerMs = 0;
  let bareMs = 0;
  let next = 1;
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let started = performance.now();
    for (let i = 0; i < n; i++) await signer.sign({ ...credential, id: `urn:bench:${next++}` }, 'did:web:127.0.0.1%3A8080');
    const signerRound = performance.now() - started;
    started = performance.now();
    for (let i = 0; i < n; i++) sign(null, Buffer.concat([payload, Buffer.from(String(i))]), privateKey);
    const bareRound = performance.now() - started;
    signerMs += signerRound;
    bareMs += bareRound;
    ratios.push(bareRound / signerRound);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const ratio = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return { signerPerSecond: (n * rounds) / (signerMs / 1000), barePerSecond: (n * rounds) / (bareMs / 1000), ratio, ratios, payloadBytes: payload.length };
}

/** One row of `bench:passport`. */
export interface PassportRow {
  readonly name: string;
  readonly p50: number;
  readonly p99: number;
  readonly answers: number;
  readonly cpuMsPerAnswer: number;
}
/** What `bench:passport` measured (BENCH_JSON). */
export interface PassportBenchResult {
  readonly units: number;
  readonly rate: number;
  readonly connections: number;
  readonly seconds: number;
  /** The unit redirect first (the baseline), then the passport page and the credential. */
  readonly rows: readonly PassportRow[];
  readonly signing: SigningFigures;
}

if (import.meta.main) {
  const scratch = await createScratchDatabase('bench_passport');
  const db = await openDatabase({ url: scratch.url }, { poolSize: 4 });
  try {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080', jwtSecret: 'bench-secret-bench-secret-bench-secret-01' });
    const brand = await createWorkspace(ctx, { name: 'Bench Brand', apiAccessEnabled: true });
    const user = await createUser(ctx, { email: 'bench@bench.example', name: 'Bench' });
    await grantRole(ctx, brand.id, user.id, 'owner');
    const [gtinA, gtinB] = [gtinOf(1), gtinOf(2)];
    const a = (
      await upsertProduct(
        ctx,
        { id: user.id },
        {
          brandId: brand.id,
          sku: 'A',
          name: 'Bench A',
          gtin: gtinA,
          commercialStatus: 'ACTIVE',
          mintReadinessStatus: 'READY',
          passportUrl: null,
        },
      )
    ).product.id;
    const batchA = await mintCompleted(ctx, { brandId: brand.id, userId: user.id, productId: a, gtin: gtinA, token: '' }, units);
    await setPassportUrl(db.em.fork(), brand.id, 'https://passports.example/a', a);
    const serialsA = (
      await query<{ serial: string }>(db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batchA.mintBatchId])
    ).map((r) => r.serial);
    const serialsB = await seedPassportProduct(ctx, brand.id, user.id, gtinB, units);
    const [{ slug }] = (await query<{ slug: string }>(db.em.fork(), 'select slug from brands where id = ?', [brand.id])) as [{ slug: string }];

    const results: PassportRow[] = [];
    const { child, port } = await spawnServer([...profile, 'bench/passport-child.ts', scratch.url, benchSecretKeys], 'bench API');
    try {
      const rows = [
        { name: 'unit redirect', status: 307, accept: browserAccept, path: (i: number) => `/r/${slug}/01/${gtinA}/21/${serialsA[i % serialsA.length]}` },
        { name: 'passport page', status: 200, accept: browserAccept, path: (i: number) => `/r/${slug}/01/${gtinB}/21/${serialsB[i % serialsB.length]}` },
        {
          name: 'credential (vc+jwt)',
          status: 200,
          accept: 'application/vc+jwt',
          path: (i: number) => `/r/${slug}/01/${gtinB}/21/${serialsB[i % serialsB.length]}`,
        },
      ];
      const load = async (row: (typeof rows)[number], duration: number) => {
        let i = Math.floor(Math.random() * 1e6);
        const samples: number[] = [];
        const statuses: Record<number, number> = {};
        const before = cpuTicks(child.pid!);
        await new Promise<void>((resolve, reject) => {
          const instance = autocannon(
            {
              url: `http://127.0.0.1:${port}`,
              connections,
              overallRate: rate,
              duration,
              headers: { accept: row.accept },
              requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: row.path(i++) }) }],
            },
            (error) => (error ? reject(error) : resolve()),
          );
          instance.on('response', (_c: unknown, statusCode: number, _b: number, responseTime: number) => {
            samples.push(responseTime);
            statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
          });
        });
        const ticks = cpuTicks(child.pid!) - before;
        samples.sort((x, y) => x - y);
        const wrong = Object.entries(statuses).filter(([s]) => Number(s) !== row.status);
        if (wrong.length > 0) throw new Error(`${row.name}: answers with status ${wrong.map(([s, n]) => `${s} x${n}`).join(', ')}`);
        return {
          name: row.name,
          p50: percentile(samples, 50),
          p99: percentile(samples, 99),
          answers: samples.length,
          cpuMsPerAnswer: (ticks * 10) / samples.length,
        };
      };
      for (const row of rows) await load(row, 1); // warm-up: JIT, caches, the first signature
      for (const row of rows) results.push(await load(row, seconds));
      const base = results[0]!;
      process.stdout.write(`\nbench:passport  ${units} units a product, ${rate} req/s over ${connections} connections, ${seconds} s a row\n`);
      process.stdout.write('row                  answers   p50 ms  p99 ms  CPU ms/answer   p50 x redirect  CPU x redirect\n');
      for (const r of results) {
        process.stdout.write(
          `${r.name.padEnd(20)} ${String(r.answers).padStart(7)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(7)} ${r.cpuMsPerAnswer.toFixed(3).padStart(14)} ${(r.p50 / base.p50).toFixed(2).padStart(15)} ${(r.cpuMsPerAnswer / base.cpuMsPerAnswer).toFixed(2).padStart(15)}\n`,
        );
      }
    } finally {
      await stopServer(child);
    }
    // Item credential signing against a bare Ed25519 loop over payloads of the same size.
    const signing = await benchItemSigning(db);
    process.stdout.write(
      `item credential signing: ${signing.signerPerSecond.toFixed(0)}/s, bare Ed25519 sign loop (${signing.payloadBytes} B): ${signing.barePerSecond.toFixed(0)}/s, ratio ${signing.ratio.toFixed(2)}x (median of ${signing.ratios.length} rounds, ${Math.min(...signing.ratios).toFixed(2)}-${Math.max(...signing.ratios).toFixed(2)})\n`,
    );
    const result: PassportBenchResult = { units, rate, connections, seconds, rows: results, signing };
    if (process.env['BENCH_JSON']) writeFileSync(process.env['BENCH_JSON'], JSON.stringify(result));
  } finally {
    await db.close(true);
    await scratch.drop();
  }
}
