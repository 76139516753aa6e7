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
// BENCH_CPU_PROF=dir writes the API child's CPU profile (node --cpu-prof) into dir.

import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { openDatabase } from '@mint/db';
import { createPassportSigner, createUseCaseContext, createUser, createWorkspace, grantRole, importPassports, upsertProduct } from '@mint/usecases';
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
const secretKeys = `b1:${Buffer.alloc(32, 3).toString('base64')}`;
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

const scratch = await createScratchDatabase('bench_passport');
const db = await openDatabase({ url: scratch.url }, { poolSize: 4 });
try {
  const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080', jwtSecret: 'bench-secret-bench-secret-bench-secret-01' });
  const brand = await createWorkspace(ctx, { name: 'Bench Brand', apiAccessEnabled: true });
  const user = await createUser(ctx, { email: 'bench@bench.example', name: 'Bench' });
  await grantRole(ctx, brand.id, user.id, 'owner');
  const product = async (sku: string, gtin: string) => (await upsertProduct(ctx, { id: user.id }, {
    brandId: brand.id, sku, name: `Bench ${sku}`, gtin, commercialStatus: 'ACTIVE', mintReadinessStatus: 'READY', passportUrl: null,
  })).product.id;
  const [gtinA, gtinB] = [gtinOf(1), gtinOf(2)];
  const [a, b] = [await product('A', gtinA), await product('B', gtinB)];
  const seeded = (productId: string, gtin: string) => ({ brandId: brand.id, userId: user.id, productId, gtin, token: '' });
  const batchA = await mintCompleted(ctx, seeded(a, gtinA), units);
  const batchB = await mintCompleted(ctx, seeded(b, gtinB), units);
  await setPassportUrl(db.em.fork(), brand.id, 'https://passports.example/a', a);
  const serialsOf = async (batch: string) => (await query<{ serial: string }>(db.em.fork(), 'select serial from mint_units where mint_batch_id = ? order by seq', [batch])).map((r) => r.serial);
  const [serialsA, serialsB] = [await serialsOf(batchA.mintBatchId), await serialsOf(batchB.mintBatchId)];
  const model = JSON.parse(readFileSync(new URL('../docs/guides/passports.md', import.meta.url), 'utf8').split('```json\n')[1]!.split('\n```')[0]!) as Record<string, unknown>;
  await importPassports(ctx, { id: user.id }, {
    brandId: brand.id, publish: true, entries: [
      { productId: b, gtin: null, lot: null, serial: null, content: model },
      { productId: b, gtin: null, lot: null, serial: serialsB[0]!, content: { extensions: [{ term: 'https://example.com/voc#stateOfHealth', name: { en: 'State of health' }, value: 97, unit: 'P1' }] } },
    ],
  });
  const [{ slug }] = await query<{ slug: string }>(db.em.fork(), 'select slug from brands where id = ?', [brand.id]) as [{ slug: string }];

  const { child, port } = await spawnServer([...profile, 'bench/passport-child.ts', scratch.url, secretKeys], 'bench API');
  try {
    const rows = [
      { name: 'unit redirect', status: 307, accept: browserAccept, path: (i: number) => `/r/${slug}/01/${gtinA}/21/${serialsA[i % serialsA.length]}` },
      { name: 'passport page', status: 200, accept: browserAccept, path: (i: number) => `/r/${slug}/01/${gtinB}/21/${serialsB[i % serialsB.length]}` },
      { name: 'credential (vc+jwt)', status: 200, accept: 'application/vc+jwt', path: (i: number) => `/r/${slug}/01/${gtinB}/21/${serialsB[i % serialsB.length]}` },
    ];
    const load = async (row: (typeof rows)[number], duration: number) => {
      let i = Math.floor(Math.random() * 1e6);
      const samples: number[] = [];
      const statuses: Record<number, number> = {};
      const before = cpuTicks(child.pid!);
      await new Promise<void>((resolve, reject) => {
        const instance = autocannon({
          url: `http://127.0.0.1:${port}`, connections, overallRate: rate, duration, headers: { accept: row.accept },
          requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: row.path(i++) }) }],
        }, (error) => (error ? reject(error) : resolve()));
        instance.on('response', (_c: unknown, statusCode: number, _b: number, responseTime: number) => {
          samples.push(responseTime);
          statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
        });
      });
      const ticks = cpuTicks(child.pid!) - before;
      samples.sort((x, y) => x - y);
      const wrong = Object.entries(statuses).filter(([s]) => Number(s) !== row.status);
      if (wrong.length > 0) throw new Error(`${row.name}: answers with status ${wrong.map(([s, n]) => `${s} x${n}`).join(', ')}`);
      return { p50: percentile(samples, 50), p99: percentile(samples, 99), answers: samples.length, cpuMsPerAnswer: (ticks * 10) / samples.length };
    };
    for (const row of rows) await load(row, 1); // warm-up: JIT, caches, the first signature
    const results = [];
    for (const row of rows) results.push({ row, ...(await load(row, seconds)) });
    const base = results[0]!;
    process.stdout.write(`\nbench:passport  ${units} units a product, ${rate} req/s over ${connections} connections, ${seconds} s a row\n`);
    process.stdout.write('row                  answers   p50 ms  p99 ms  CPU ms/answer   p50 x redirect  CPU x redirect\n');
    for (const r of results) {
      process.stdout.write(`${r.row.name.padEnd(20)} ${String(r.answers).padStart(7)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(7)} ${r.cpuMsPerAnswer.toFixed(3).padStart(14)} ${(r.p50 / base.p50).toFixed(2).padStart(15)} ${(r.cpuMsPerAnswer / base.cpuMsPerAnswer).toFixed(2).padStart(15)}\n`);
    }
  } finally {
    await stopServer(child);
  }

  // Item credential signing against a bare Ed25519 loop over payloads of the same size.
  const signerCtx = createUseCaseContext({
    db, publicBaseUrl: 'http://127.0.0.1:8080', jwtSecret: 'bench-secret-bench-secret-bench-secret-01',
    webhookSecretKeys: [{ id: 'b1', secret: new Uint8Array(Buffer.alloc(32, 3)) }],
  });
  const signer = createPassportSigner(signerCtx, { maxSigned: 1 });
  const credential = { ...model, id: 'urn:bench:0' };
  await signer.sign(credential, 'did:web:127.0.0.1%3A8080');
  const n = 2_000;
  let started = performance.now();
  for (let i = 0; i < n; i++) await signer.sign({ ...credential, id: `urn:bench:${i + 1}` }, 'did:web:127.0.0.1%3A8080');
  const signerPerSecond = n / ((performance.now() - started) / 1000);
  const { privateKey } = generateKeyPairSync('ed25519');
  const payload = Buffer.from(JSON.stringify(credential));
  started = performance.now();
  for (let i = 0; i < n; i++) sign(null, Buffer.concat([payload, Buffer.from(String(i))]), privateKey);
  const barePerSecond = n / ((performance.now() - started) / 1000);
  process.stdout.write(`item credential signing: ${signerPerSecond.toFixed(0)}/s, bare Ed25519 sign loop (${payload.length} B): ${barePerSecond.toFixed(0)}/s, ratio ${(signerPerSecond / barePerSecond).toFixed(2)}x\n`);
} finally {
  await db.close(true);
  await scratch.drop();
}
