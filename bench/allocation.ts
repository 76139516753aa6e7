// `npm run bench:allocation`: whether a partner allocation's cost grows with what was allocated
// before. Seeds a batch of BENCH_ALLOCATION_REQUESTS x 10,000 issued units (default 40: 400,000, the
// 1,000,000-unit lifecycle scenario's partner B made 40 such requests), grants a partner key on the
// batch, then BENCH_RUNS times (default 3) allocates the whole batch by AllocateSerials' use case,
// 10,000 serials a request, timing each request. The figure is the last request's time against the
// first's in the same run (the target: about 1x; an allocation that reads the batch from seq 1 grows
// linearly). Between runs the allocations, their events and the batch's allocation floor are
// deleted and the tables vacuumed (not timed). BENCH_JSON names a file for the figures as JSON.

import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { allocateSerials, createPartner, grantPartnerKey } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const perRequest = 10_000;
const requests = Number(process.env['BENCH_ALLOCATION_REQUESTS'] ?? 40);
const runs = Number(process.env['BENCH_RUNS'] ?? 3);
const units = requests * perRequest;

/** What the script writes to BENCH_JSON: per run, every request's milliseconds in order. */
export interface AllocationBenchResult {
  readonly units: number;
  readonly perRequest: number;
  readonly runs: readonly { readonly requestMs: readonly number[] }[];
  /** The 1-minute load average when the runs started and ended. */
  readonly load: readonly [number, number];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const seeded = await seedUnits('bench_allocation', units);
const client = new pg.Client({ connectionString: seeded.url });
await client.connect();
try {
  // Issued units of a batch minted for first scan: every one allocatable.
  await client.query(`update mint_batches set activation_mode = 'first_scan' where id = $1`, [seeded.batchId]);
  await client.query(`update mint_units set status = 'inactive', activated_at = null where mint_batch_id = $1`, [seeded.batchId]);
  const users = await client.query<{ id: string }>('select id from users limit 1');
  const actor = { id: users.rows[0]!.id };
  const { partnerId } = await createPartner(seeded.ctx, actor, { brandId: seeded.brandId, name: 'Bench line' });
  const granted = await grantPartnerKey(seeded.ctx, actor, {
    brandId: seeded.brandId,
    partnerId,
    name: 'bench',
    quota: units,
    productId: null,
    mintBatchId: seeded.batchId,
  });
  const caller = { apiKeyId: granted.keyId, partnerId };
  const reset = async () => {
    for (const table of ['unit_allocations', 'allocation_requests', 'mint_events', 'epcis_events']) await client.query(`delete from ${table}`);
    // The floor's table exists from its migration on; before it, nothing to reset.
    await client.query(`delete from allocation_floors`).catch(() => undefined);
    await client.query('update partner_grants set allocated = 0');
    for (const table of ['mint_units', 'unit_allocations', 'allocation_requests', 'mint_events', 'epcis_events']) await client.query(`VACUUM ANALYZE ${table}`);
  };
  await reset();
  const loadStart = loadavg()[0]!;
  const figures: { requestMs: number[] }[] = [];
  for (let run = 1; run <= runs; run++) {
    const requestMs: number[] = [];
    for (let i = 1; i <= requests; i++) {
      const t = performance.now();
      const got = await allocateSerials(seeded.ctx, caller, { brandId: seeded.brandId, quantity: perRequest, idempotencyKey: `bench-${run}-${i}` });
      requestMs.push(performance.now() - t);
      if (got.units.length !== perRequest) throw new Error(`request ${i} allocated ${got.units.length}`);
    }
    figures.push({ requestMs });
    const first = requestMs[0]!;
    const last = requestMs.at(-1)!;
    process.stdout.write(
      `run ${run}: request 1 ${Math.round(first)} ms, request ${requests / 2} ${Math.round(requestMs[requests / 2 - 1]!)} ms, request ${requests} ${Math.round(last)} ms, ratio last/first ${(last / first).toFixed(2)}x, all ${Math.round(requestMs.reduce((a, b) => a + b, 0) / 1000)} s\n`,
    );
    await reset();
  }
  const loadEnd = loadavg()[0]!;
  const ratios = figures.map((f) => f.requestMs.at(-1)! / f.requestMs[0]!);
  // Single requests are noisy on a loaded host: also the median of the last five against the first five.
  const fives = figures.map((f) => median(f.requestMs.slice(-5)) / median(f.requestMs.slice(0, 5)));
  const spread = (xs: number[]) => `median ${median(xs).toFixed(2)}x (min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)})`;
  process.stdout.write(
    `allocation ${requests} of ${requests} requests of ${perRequest.toLocaleString('en-US')} against the 1st: ${spread(ratios)}; last five against first five: ${spread(fives)}; load average ${loadStart.toFixed(1)} -> ${loadEnd.toFixed(1)}\n`,
  );
  const json = process.env['BENCH_JSON'];
  if (json) writeFileSync(json, JSON.stringify({ units, perRequest, runs: figures, load: [loadStart, loadEnd] } satisfies AllocationBenchResult));
} finally {
  await client.end();
  await seeded.drop();
}
