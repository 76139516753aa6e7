// Property tests of the status machines (jobs, mint batches, payload packs): random sequences of
// attempted moves against a model, in memory and as compare-and-set updates on a real database.

import { randomUUID } from 'node:crypto';
import {
  batchStatuses,
  canMoveBatch,
  canMoveJob,
  claimJob,
  completeSerialJob,
  completeWithoutUnits,
  enqueuePreflighted,
  failJob,
  isDomainError,
  isTerminalJobStatus,
  jobStatuses,
  manualBatchMove,
  moveBatch,
  movePack,
  packStatuses,
  startProcessing,
  terminalJobStatuses,
  type BatchMove,
  type BatchStatus,
  type JobMove,
  type JobStatus,
  type PackStatus,
} from '@mint/domain';
import { moveBatchStatus, moveJob } from '@mint/db';
import { query } from '../support/sql.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import { fuzzParameters } from './support.ts';

/** The job lifecycle as the spec draws it: every legal move, nothing else. */
const jobGraph: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  PREFLIGHTED: ['QUEUED', 'FAILED'],
  QUEUED: ['RESERVED', 'FAILED'],
  RESERVED: ['PROCESSING', 'COMPLETED', 'FAILED'],
  PROCESSING: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
};

/** Final batch statuses: applied (labels on products) and voided. */
const finalBatchStatuses: readonly BatchStatus[] = ['applied', 'voided'];

/** Pack statuses no move leaves. */
const finalPackStatuses: readonly PackStatus[] = ['ready', 'failed'];

/** What a move attempt did: the move it built, or the error it threw. */
function attempt<T>(build: () => T): { ok: true; move: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, move: build() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Every named job move, by name, with the status it leaves and the one it reaches. */
const namedJobMoves: readonly (readonly [string, () => JobMove, JobStatus, JobStatus])[] = [
  ['enqueuePreflighted', enqueuePreflighted, 'PREFLIGHTED', 'QUEUED'],
  ['claimJob', claimJob, 'QUEUED', 'RESERVED'],
  ['startProcessing', startProcessing, 'RESERVED', 'PROCESSING'],
  ['completeSerialJob', completeSerialJob, 'PROCESSING', 'COMPLETED'],
  ['completeWithoutUnits', completeWithoutUnits, 'RESERVED', 'COMPLETED'],
];

describe('job statuses', () => {
  const status = fc.constantFrom(...jobStatuses);

  it('canMoveJob allows exactly the moves of the lifecycle', () => {
    fc.assert(
      fc.property(status, status, (from, to) => {
        expect(canMoveJob(from, to), `${from} -> ${to}`).toBe(jobGraph[from].includes(to));
      }),
      fuzzParameters(),
    );
  });

  it('terminal statuses never move, and only they are terminal', () => {
    fc.assert(
      fc.property(status, status, (from, to) => {
        expect(isTerminalJobStatus(from)).toBe(terminalJobStatuses.includes(from));
        if (isTerminalJobStatus(from)) {
          expect(canMoveJob(from, to)).toBe(false);
          expect(attempt(() => failJob(from)).ok, `failJob(${from})`).toBe(false);
        } else {
          expect(failJob(from)).toEqual({ from, to: 'FAILED' });
        }
      }),
      fuzzParameters(),
    );
  });

  it('any sequence of legal moves from PREFLIGHTED or QUEUED never revisits a status and ends in a terminal one', () => {
    // Each step picks one of the current status's legal moves (or a random illegal one, which must be refused).
    const steps = fc.array(fc.tuple(fc.nat(), status), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.constantFrom<JobStatus>('PREFLIGHTED', 'QUEUED'), steps, (start, picks) => {
        let current = start;
        const seen = new Set<JobStatus>([current]);
        for (const [pick, random] of picks) {
          if (!canMoveJob(current, random)) {
            expect(attempt(() => failJob(current)).ok).toBe(!isTerminalJobStatus(current));
            continue;
          }
          const next = jobGraph[current][pick % jobGraph[current].length];
          if (next === undefined) break;
          expect(canMoveJob(current, next)).toBe(true);
          expect(seen.has(next), `revisits ${next}`).toBe(false);
          seen.add(next);
          current = next;
        }
        // Finish along the first legal move: every path reaches a terminal status within 4 moves.
        for (let i = 0; i < 4 && !isTerminalJobStatus(current); i++) current = jobGraph[current][0]!;
        expect(isTerminalJobStatus(current), `stuck in ${current}`).toBe(true);
      }),
      fuzzParameters(),
    );
  });

  it('each named move builds exactly its compare-and-set pair', () => {
    for (const [name, build, from, to] of namedJobMoves) {
      expect(build(), name).toEqual({ from, to });
      expect(canMoveJob(from, to), name).toBe(true);
    }
  });
});

describe('mint batch statuses', () => {
  const status = fc.constantFrom(...batchStatuses);

  it('a move is one step forward, or to voided from anything but applied and voided; illegal moves throw IllegalStateError', () => {
    fc.assert(
      fc.property(status, status, (from, to) => {
        const legal = to === 'voided' ? !finalBatchStatuses.includes(from) : batchStatuses.indexOf(to) === batchStatuses.indexOf(from) + 1 && from !== 'voided';
        expect(canMoveBatch(from, to), `${from} -> ${to}`).toBe(legal);
        const built = attempt(() => moveBatch(from, to));
        if (legal) expect(built).toEqual({ ok: true, move: { from, to } });
        else expect(!built.ok && isDomainError(built.error, 'illegal_state'), `${from} -> ${to} must throw IllegalStateError`).toBe(true);
      }),
      fuzzParameters(),
    );
  });

  it('final statuses never move; minted is never set by hand', () => {
    fc.assert(
      fc.property(status, status, (from, to) => {
        if (finalBatchStatuses.includes(from)) expect(canMoveBatch(from, to)).toBe(false);
        if (to === 'minted') {
          const manual = attempt(() => manualBatchMove(from, to));
          expect(!manual.ok && isDomainError(manual.error, 'illegal_state')).toBe(true);
        }
      }),
      fuzzParameters(),
    );
  });

  it('any sequence of attempted moves keeps a batch on the lifecycle: never backwards, never out of a final status', () => {
    fc.assert(
      fc.property(fc.array(status, { maxLength: 15 }), (targets) => {
        let current: BatchStatus = 'draft';
        for (const to of targets) {
          const built = attempt(() => moveBatch(current, to));
          if (!built.ok) continue;
          const rank = (s: BatchStatus) => (s === 'voided' ? Infinity : batchStatuses.indexOf(s));
          expect(rank(built.move.to), `${current} -> ${to}`).toBeGreaterThan(rank(current));
          expect(finalBatchStatuses.includes(current), `left final ${current}`).toBe(false);
          current = built.move.to;
        }
        expect(batchStatuses).toContain(current);
      }),
      fuzzParameters(),
    );
  });
});

describe('payload pack statuses', () => {
  const status = fc.constantFrom(...packStatuses);

  it('ready and failed never move; any sequence stays within the statuses', () => {
    fc.assert(
      fc.property(fc.array(status, { maxLength: 15 }), (targets) => {
        let current: PackStatus = 'pending';
        for (const to of targets) {
          const built = attempt(() => movePack(current, to));
          if (finalPackStatuses.includes(current)) expect(built.ok, `${current} -> ${to}`).toBe(false);
          if (!built.ok) {
            expect(isDomainError(built.error, 'illegal_state')).toBe(true);
            continue;
          }
          expect(built.move).toEqual({ from: current, to });
          current = to;
        }
        // A pending pack is only ever claimed: it never jumps to ready or failed.
        expect(attempt(() => movePack('pending', 'ready')).ok).toBe(false);
        expect(attempt(() => movePack('pending', 'failed')).ok).toBe(false);
      }),
      fuzzParameters(),
    );
  });
});

describe('compare-and-set on the database', () => {
  let app: UseCaseBundle;
  let brand: SeededBrand;

  beforeAll(async () => {
    app = await setupUseCases();
    brand = await app.seedBrand();
  });

  afterAll(async () => {
    await app?.close();
  });

  /** Inserts a job (and, unless PREFLIGHTED, its draft batch) directly, in `status`. */
  async function insertJob(status: JobStatus): Promise<{ jobId: string; batchId: string }> {
    const em = app.db.em.fork();
    const jobId = randomUUID();
    const batchId = randomUUID();
    const now = new Date();
    await query(
      em,
      `insert into mint_jobs (brand_id, id, status, scope_type, requested_quantity, product_id, created_at, updated_at)
      values (?, ?, ?, 'serial', 1, ?, ?, ?)`,
      [brand.brandId, jobId, status, brand.productId, now, now],
    );
    await query(
      em,
      `insert into mint_batches (brand_id, id, mint_job_id, product_id, status, identity_mode, activation_mode, requested_quantity,
      minted_quantity, resolver_base_url, created_at, updated_at) values (?, ?, ?, ?, 'draft', 'serial', 'active_at_mint', 1, 0, 'http://r.test', ?, ?)`,
      [brand.brandId, batchId, jobId, brand.productId, now, now],
    );
    return { jobId, batchId };
  }

  async function statusOf(table: 'mint_jobs' | 'mint_batches', id: string): Promise<string> {
    const [row] = await query<{ status: string }>(app.db.em.fork(), `select status from ${table} where brand_id = ? and id = ?`, [brand.brandId, id]);
    return row!.status;
  }

  /** Every legal job move, for the generator to pick from (with expected statuses that are often wrong). */
  const legalJobMoves: JobMove[] = jobStatuses.flatMap((from) => jobGraph[from].map((to) => ({ from, to })));
  const legalBatchMoves: BatchMove[] = batchStatuses.flatMap((from) => batchStatuses.filter((to) => canMoveBatch(from, to)).map((to) => ({ from, to })));

  it('a job move applies only where the row still has the expected status; a wrong one changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<JobStatus>('PREFLIGHTED', 'QUEUED'),
        fc.array(fc.constantFrom(...legalJobMoves), { minLength: 1, maxLength: 8 }),
        async (start, moves) => {
          const { jobId } = await insertJob(start);
          let model: JobStatus = start;
          for (const move of moves) {
            const applied = await moveJob(app.db.em.fork(), brand.brandId, jobId, move, new Date(), move.to === 'FAILED' ? 'fuzz' : null);
            expect(applied, `${model}: ${move.from} -> ${move.to}`).toBe(move.from === model);
            if (applied) model = move.to;
            expect(await statusOf('mint_jobs', jobId)).toBe(model);
          }
          const [row] = await query<{ finished_at: Date | null }>(app.db.em.fork(), 'select finished_at from mint_jobs where brand_id = ? and id = ?', [
            brand.brandId,
            jobId,
          ]);
          expect(row!.finished_at !== null, `finished_at of a ${model} job`).toBe(isTerminalJobStatus(model));
        },
      ),
      fuzzParameters(0.4),
    );
  });

  it('a batch move applies only where the row still has the expected status; a wrong one changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...legalBatchMoves), { minLength: 1, maxLength: 8 }), async (moves) => {
        const { batchId } = await insertJob('QUEUED');
        let model: BatchStatus = 'draft';
        for (const move of moves) {
          const applied = await moveBatchStatus(app.db.em.fork(), brand.brandId, batchId, move, new Date());
          expect(applied, `${model}: ${move.from} -> ${move.to}`).toBe(move.from === model);
          if (applied) model = move.to;
          expect(await statusOf('mint_batches', batchId)).toBe(model);
        }
      }),
      fuzzParameters(0.4),
    );
  });
});
