// `npm run bench:serials`: a bulk serial move against a bare UPDATE of the same rows, same run.
// Seeds a batch of BENCH_SERIAL_UNITS commissioned units (default 200,000; the full size is
// 1,000,000), then BENCH_RUNS times (default 3), alternating: (1) the baseline, one
// `UPDATE mint_units SET status = 'inactive'` over the batch; (2) MoveSerials' use case
// decommissioning the whole batch (chunks of 10,000, each one transaction writing the units'
// statuses and lifecycle rows, the KPI, the audit event and the EPCIS event). Before the first run
// and after each measured write the batch is restored and the tables vacuumed (not timed), so each
// write starts from the same tables. Prints each run and the median ratio move/baseline
// (the target: at least 0.5). BENCH_JSON names a file for the figures as JSON.

import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { moveSerials } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const units = Number(process.env['BENCH_SERIAL_UNITS'] ?? 200_000);
const runs = Number(process.env['BENCH_RUNS'] ?? 3);
const seeded = await seedUnits('bench_serials', units);
const client = new pg.Client({ connectionString: seeded.url });
await client.connect();
/** What the script writes to BENCH_JSON: per run, the bare UPDATE's and the move's milliseconds. */
export interface SerialMovesBenchResult {
  readonly units: number;
  readonly runs: readonly { readonly baselineMs: number; readonly moveMs: number }[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const users = await client.query<{ id: string }>('select id from users limit 1');
  const actor = { id: users.rows[0]!.id };
  const restore = async () => {
    await client.query(`update mint_units set status = 'active' where brand_id = $1 and mint_batch_id = $2`, [seeded.brandId, seeded.batchId]);
    await client.query('delete from unit_states');
    await client.query('delete from epcis_events');
    await client.query('VACUUM ANALYZE mint_units');
    await client.query('VACUUM ANALYZE unit_states');
    await client.query('VACUUM ANALYZE epcis_events');
  };
  // Both measured writes start from the same table: the units rewritten once and vacuumed (a freshly
  // seeded table has no free space in its pages, which the first baseline alone would meet).
  await restore();
  const ratios: number[] = [];
  const figures: { baselineMs: number; moveMs: number }[] = [];
  for (let run = 1; run <= runs; run++) {
    let t = performance.now();
    const bare = await client.query(`update mint_units set status = 'inactive' where brand_id = $1 and mint_batch_id = $2`, [seeded.brandId, seeded.batchId]);
    const baselineMs = performance.now() - t;
    await restore();
    t = performance.now();
    const move = await moveSerials(
      seeded.ctx,
      actor,
      {
        brandId: seeded.brandId,
        action: 'decommission',
        reason: 'recalled',
        target: { mintBatchId: seeded.batchId },
        idempotencyKey: `bench-${run}`,
      },
      { runAll: true },
    );
    const moveMs = performance.now() - t;
    if (move.moved !== units || bare.rowCount !== units) throw new Error(`moved ${move.moved}, updated ${bare.rowCount} of ${units}`);
    await restore();
    ratios.push(baselineMs / moveMs);
    figures.push({ baselineMs, moveMs });
    const rate = (ms: number) => Math.round(units / (ms / 1000)).toLocaleString('en-US');
    process.stdout.write(
      `run ${run}: bare UPDATE ${Math.round(baselineMs)} ms (${rate(baselineMs)} rows/s), MoveSerials ${Math.round(moveMs)} ms (${rate(moveMs)} units/s), ratio ${(baselineMs / moveMs).toFixed(2)}x\n`,
    );
  }
  const json = process.env['BENCH_JSON'];
  if (json) writeFileSync(json, JSON.stringify({ units, runs: figures } satisfies SerialMovesBenchResult));
  process.stdout.write(
    `serial move of ${units.toLocaleString('en-US')} units: median ratio ${median(ratios).toFixed(2)}x (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)})\n`,
  );
} finally {
  await client.end();
  await seeded.drop();
}
