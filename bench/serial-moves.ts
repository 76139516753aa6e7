// `npm run bench:serials`: a bulk serial move against a bare UPDATE of the same rows, same run.
// Seeds a batch of BENCH_SERIAL_UNITS commissioned units (default 200,000; the full size is
// 1,000,000), then times (1) the baseline: one `UPDATE mint_units SET status = 'inactive'` over the
// batch (undone and vacuumed before the move, not timed), and (2) MoveSerials' use case
// decommissioning the whole batch (chunks of 10,000, each one transaction that locks its units,
// writes their lifecycle rows and statuses, the KPI, the audit event and the EPCIS event).
// Prints both rates and the ratio move/baseline (the target: at least 0.5).

import pg from 'pg';
import { moveSerials } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const units = Number(process.env['BENCH_SERIAL_UNITS'] ?? 200_000);
const seeded = await seedUnits('bench_serials', units);
const client = new pg.Client({ connectionString: seeded.url });
await client.connect();
try {
  const users = await client.query<{ id: string }>('select id from users limit 1');
  const actor = { id: users.rows[0]!.id };
  let t = performance.now();
  const bare = await client.query(`update mint_units set status = 'inactive' where brand_id = $1 and mint_batch_id = $2`, [seeded.brandId, seeded.batchId]);
  const baselineMs = performance.now() - t;
  await client.query(`update mint_units set status = 'active' where brand_id = $1 and mint_batch_id = $2`, [seeded.brandId, seeded.batchId]);
  await client.query('VACUUM ANALYZE mint_units');
  t = performance.now();
  const move = await moveSerials(seeded.ctx, actor, {
    brandId: seeded.brandId, action: 'decommission', reason: 'recalled', target: { mintBatchId: seeded.batchId }, idempotencyKey: 'bench',
  }, { runAll: true });
  const moveMs = performance.now() - t;
  if (move.moved !== units || bare.rowCount !== units) throw new Error(`moved ${move.moved}, updated ${bare.rowCount} of ${units}`);
  const rate = (ms: number) => Math.round(units / (ms / 1000));
  process.stdout.write(`serial move of ${units.toLocaleString('en-US')} units: bare UPDATE ${Math.round(baselineMs)} ms (${rate(baselineMs).toLocaleString('en-US')} rows/s), `
    + `MoveSerials ${Math.round(moveMs)} ms (${rate(moveMs).toLocaleString('en-US')} units/s), ratio ${(baselineMs / moveMs).toFixed(2)}x\n`);
} finally {
  await client.end();
  await seeded.drop();
}
