import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run } from '../../../test/support/sql.ts';
import { isDomainError, isLeaseLostError, type Lease, type MintRequest } from '@mint/domain';
import {
  claimMintJob,
  findJobsToSweep,
  processMintJobBatch,
  recordFailedAttempt,
  releaseMintJob,
  runMint,
  submitAndKick,
  type ClaimResult,
  type UseCaseContext,
} from '@mint/usecases';
import { setupUseCases, submitSerial, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let offsetMs = 0;
let ctx: UseCaseContext;
beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  // A clock the tests move forward to let leases lapse.
  ctx = { ...app.ctx, clock: () => new Date(Date.now() + offsetMs) };
});
afterAll(() => app.close());

const submit = (requestedQuantity: number, overrides: Partial<MintRequest> = {}) => submitSerial(ctx, brand, requestedQuantity, overrides);
/** Submit + kick of a serial request, as the API runs it. */
const submitAndKickSerial = (requestedQuantity: number, idempotencyKey: string | null = null) =>
  submitAndKick(
    ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity,
      identityMode: 'serial',
      activationMode: 'active_at_mint',
      lots: [],
      idempotencyKey,
    },
  );
/** A run of at most `writers` chunks of `chunkSize` units, as one processing cycle writes. */
const runMintCycle = (c: UseCaseContext, lease: Lease, chunkSize: number, leaseMs: number, writers = 1) =>
  runMint(c, lease, { chunkSize, leaseMs, writers, unitLimit: chunkSize * writers });
function claimed(result: ClaimResult) {
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
  return result.lease;
}
async function units(batchId: string) {
  const [row] = await query<{ n: string; serials: string; min: number | null; max: number | null; minted: number }>(
    app.db.em.fork(),
    `select count(*) as n, count(distinct serial) as serials, min(seq) as min, max(seq) as max,
            (select minted_quantity from mint_batches where id = ?) as minted
     from mint_units where mint_batch_id = ?`,
    [batchId, batchId],
  );
  return { n: Number(row!.n), serials: Number(row!.serials), min: row!.min, max: row!.max, minted: row!.minted };
}

describe('mint job leases', () => {
  it('resets the failed-attempt count when a chunk commits, so scattered errors never add up to FAILED', async () => {
    const { mintJobId } = await submit(3000);
    for (let i = 0; i < 5; i++) await recordFailedAttempt(ctx, brand.brandId, mintJobId, 'connection reset');
    const attempts = async () => (await query<{ attempts: number }>(app.db.em.fork(), `select attempts from mint_jobs where id = ?`, [mintJobId]))[0]!.attempts;
    expect(await attempts()).toBe(5);
    const lease = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-r', 10_000));
    await runMintCycle(ctx, lease, 2000, 10_000);
    expect(await attempts()).toBe(0);
    await releaseMintJob(ctx, lease);
  });

  it('rejects the late chunk of a holder whose lease lapsed and was taken over, writing nothing', async () => {
    const { mintJobId, mintBatchId } = await submit(5000);
    const a = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 1000));
    expect(await runMintCycle(ctx, a, 2000, 1000)).toMatchObject({ insertedCount: 2000, mintedQuantity: 2000, status: 'PROCESSING' });
    // A live lease is not taken: B is told when it lapses.
    const early = await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-b', 1000);
    expect(early.kind).toBe('held');
    offsetMs += 1500;
    const b = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-b', 1000));
    expect(b.token).toBe(a.token + 1);
    const late = await runMintCycle(ctx, a, 2000, 1000).catch((e: unknown) => e);
    expect(isLeaseLostError(late)).toBe(true);
    expect(isDomainError(late, 'conflict')).toBe(true);
    expect(await units(mintBatchId)).toEqual({ n: 2000, serials: 2000, min: 1, max: 2000, minted: 2000 });
    expect(await runMintCycle(ctx, b, 2000, 1000)).toMatchObject({ insertedCount: 2000, mintedQuantity: 4000 });
    expect(await runMintCycle(ctx, b, 2000, 1000)).toMatchObject({ insertedCount: 1000, mintedQuantity: 5000, done: true, status: 'COMPLETED' });
    expect(await units(mintBatchId)).toEqual({ n: 5000, serials: 5000, min: 1, max: 5000, minted: 5000 });
    const [job] = await query<{ lease_owner: string | null }>(app.db.em.fork(), `select lease_owner from mint_jobs where id = ?`, [mintJobId]);
    expect(job!.lease_owner).toBeNull();
  });

  it('lets another worker claim at once after a release, and refuses the released lease', async () => {
    const { mintJobId, mintBatchId } = await submit(3000);
    const a = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 60_000));
    await runMintCycle(ctx, a, 1000, 60_000);
    expect(await releaseMintJob(ctx, a)).toBe(true);
    const b = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-b', 60_000));
    expect(isLeaseLostError(await runMintCycle(ctx, a, 1000, 60_000).catch((e: unknown) => e))).toBe(true);
    expect((await runMintCycle(ctx, b, 5000, 60_000)).done).toBe(true);
    expect(await units(mintBatchId)).toEqual({ n: 3000, serials: 3000, min: 1, max: 3000, minted: 3000 });
  });

  it('runs the same chunk twice at once only once', async () => {
    const { mintJobId, mintBatchId } = await submit(4000);
    const a = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 60_000));
    await runMintCycle(ctx, a, 1000, 60_000);
    const results = await Promise.allSettled([runMintCycle(ctx, a, 1000, 60_000), runMintCycle(ctx, a, 1000, 60_000)]);
    // When both plan the same seqs one collides (ConflictError); when the second starts after the
    // first committed it writes the next seqs. Either way nothing is minted twice or skipped.
    const written = results.filter((r) => r.status === 'fulfilled').length;
    for (const r of results) if (r.status === 'rejected') expect(isDomainError(r.reason, 'conflict')).toBe(true);
    expect(written).toBeGreaterThanOrEqual(1);
    const minted = 1000 + 1000 * written;
    expect(await units(mintBatchId)).toEqual({ n: minted, serials: minted, min: 1, max: minted, minted });
  });

  it('refuses a processing cycle on a job an executor holds, without writing', async () => {
    const idempotencyKey = randomUUID();
    const { mintJobId, mintBatchId } = await submit(100, { idempotencyKey });
    claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 60_000));
    expect(isDomainError(await processMintJobBatch(ctx, brand.brandId, mintJobId, 2000).catch((e: unknown) => e), 'conflict')).toBe(true);
    // A repeated submit + kick leaves the held job to its executor.
    const kick = await submitAndKickSerial(100, idempotencyKey);
    expect(kick).toMatchObject({ submit: { ok: true, mintJobId, isDuplicate: true }, kicked: false, cycle: null });
    expect(isDomainError(kick.kickError, 'conflict')).toBe(true);
    expect((await units(mintBatchId)).n).toBe(0);
  });

  it('kicks up to 20,000 units in one synchronous call and releases the lease for the executor', async () => {
    const kick = await submitAndKickSerial(25_000);
    if (!kick.submit.ok) throw new Error('submit blocked');
    const { mintJobId, mintBatchId } = kick.submit;
    expect(kick.cycle).toEqual({
      done: false,
      insertedCount: 20_000,
      mintedQuantity: 20_000,
      requestedQuantity: 25_000,
      status: 'PROCESSING',
    });
    const b = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-b', 60_000));
    expect(await runMintCycle(ctx, b, 20_000, 60_000)).toMatchObject({ done: true, insertedCount: 5000, mintedQuantity: 25_000 });
    expect(await units(mintBatchId)).toEqual({ n: 25_000, serials: 25_000, min: 1, max: 25_000, minted: 25_000 });
  });

  it('sweeps idle QUEUED jobs and jobs whose lease lapsed, but not jobs held under a live lease', async () => {
    const queued = await submit(10);
    const live = await submit(10);
    const lapsed = await submit(10);
    claimed(await claimMintJob(ctx, brand.brandId, live.mintJobId, 'executor-a', 60_000));
    claimed(await claimMintJob(ctx, brand.brandId, lapsed.mintJobId, 'executor-a', 1000));
    const swept = async () => new Set((await findJobsToSweep(ctx, 500)).map((j) => j.id));
    expect((await swept()).has(queued.mintJobId)).toBe(false);
    offsetMs += 2000;
    const later = await swept();
    expect([queued, live, lapsed].map((j) => later.has(j.mintJobId))).toEqual([true, false, true]);
  });

  it('writes chunks of one job concurrently and fills the gap a failed writer left, ending with exactly 1..N', async () => {
    const { mintJobId, mintBatchId } = await submit(7000);
    const lease = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 60_000));
    // The lead (seq 1..50) commits alone; of the next two concurrent chunks the first (seq 51..919)
    // fails (a real constraint refuses its rows, so its insert fails), the second (seq 920..1788) commits.
    await run(
      app.db.em.fork(),
      `alter table mint_units add constraint writer_crashed check (mint_batch_id <> '${mintBatchId}' or seq not between 51 and 919) not valid`,
    );
    try {
      await expect(runMint(ctx, lease, { chunkSize: 1000, leaseMs: 60_000, writers: 2 })).rejects.toThrow('writer_crashed');
    } finally {
      await run(app.db.em.fork(), 'alter table mint_units drop constraint writer_crashed');
    }
    expect(await units(mintBatchId)).toEqual({ n: 919, serials: 919, min: 1, max: 1788, minted: 919 });
    expect(await runMint(ctx, lease, { chunkSize: 1000, leaseMs: 60_000, writers: 2 })).toMatchObject({
      done: true,
      status: 'COMPLETED',
      insertedCount: 6081,
      mintedQuantity: 7000,
    });
    expect(await units(mintBatchId)).toEqual({ n: 7000, serials: 7000, min: 1, max: 7000, minted: 7000 });
    const [job] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [mintJobId]);
    expect(job!.status).toBe('COMPLETED');
  });

  it('writes a whole job in one run, each writer taking the next chunk without waiting for the other', async () => {
    const { mintJobId, mintBatchId } = await submit(5000);
    const lease = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 60_000));
    // Another transaction holds seq 51 uncommitted, so the insert of the chunk after the lead waits for it.
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const blocker = app.db.em
      .fork()
      .transactional(async (em) => {
        await query(
          em,
          `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at)
                   values (?, gen_random_uuid(), ?, 51, 'BLOCKER', 'active', now())`,
          [brand.brandId, mintBatchId],
        );
        holding();
        await blocked;
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    await held;
    const committed: number[] = [];
    const run = runMint(ctx, lease, { chunkSize: 1000, leaseMs: 60_000, writers: 2, onChunk: (c) => committed.push(c.insertedCount) });
    // The lead commits, then the other writer writes every chunk after the blocked one meanwhile: 4,175
    // units, the lead's 50 and 4,125 in five chunks of 825.
    const deadline = Date.now() + 30_000;
    while ((await units(mintBatchId)).minted < 4175) {
      if (Date.now() > deadline) throw new Error(`only ${(await units(mintBatchId)).minted} units minted while the blocked chunk waited`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(committed).toEqual([50, 825, 825, 825, 825, 825]);
    const [job] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [mintJobId]);
    expect(job!.status).toBe('PROCESSING');
    unblock();
    await blocker;
    expect(await run).toMatchObject({ done: true, status: 'COMPLETED', insertedCount: 5000, mintedQuantity: 5000 });
    expect(committed.at(-1)).toBe(825);
    expect(await units(mintBatchId)).toEqual({ n: 5000, serials: 5000, min: 1, max: 5000, minted: 5000 });
  });

  it("commits a job's lead chunk alone, before any other chunk of the job starts", async () => {
    const { mintJobId } = await submit(6000);
    const lease = claimed(await claimMintJob(ctx, brand.brandId, mintJobId, 'executor-a', 60_000));
    const chunks: { readonly firstSeq: number; readonly startedAt: number; readonly committedAt: number }[] = [];
    await runMint(ctx, lease, {
      chunkSize: 1000,
      leaseMs: 60_000,
      writers: 2,
      onChunk: (c) => chunks.push({ firstSeq: c.firstSeq, startedAt: performance.now() - c.seconds * 1000, committedAt: performance.now() }),
    });
    const [lead, ...rest] = chunks;
    expect(lead).toMatchObject({ firstSeq: 1 });
    expect(rest).toHaveLength(6);
    // Each later chunk started (its serials, then its transaction) only once the lead had committed.
    expect(rest.filter((c) => c.startedAt < lead!.committedAt - 0.5).map((c) => c.firstSeq)).toEqual([]);
  });

  it('leaves a job RESERVED until a chunk commits, and moves it to PROCESSING in that chunk', async () => {
    // A fresh brand's first serial batch makes the brand's serial key (random bytes) before its first
    // chunk: with the randomness failing, the run fails before any chunk commits.
    const fresh = await app.seedBrand();
    const { mintJobId, mintBatchId } = await submitSerial(ctx, fresh, 3000);
    const lease = claimed(await claimMintJob(ctx, fresh.brandId, mintJobId, 'executor-a', 60_000));
    const status = async () => (await query<{ status: string }>(app.db.em.fork(), `select status from mint_jobs where id = ?`, [mintJobId]))[0]!.status;
    const failing: UseCaseContext = {
      ...ctx,
      randomFill: () => {
        throw new Error('writer crashed');
      },
    };
    await expect(runMint(failing, lease, { chunkSize: 1000, leaseMs: 60_000, writers: 2 })).rejects.toThrow('writer crashed');
    expect(await status()).toBe('RESERVED');
    expect(await runMintCycle(ctx, lease, 250, 60_000)).toMatchObject({ insertedCount: 250, status: 'PROCESSING' });
    expect(await status()).toBe('PROCESSING');
    expect((await units(mintBatchId)).n).toBe(250);
  });
});
