// `npm run bench:serials`: a bulk serial move against a bare UPDATE of the same rows, same run.
// Seeds a batch of BENCH_SERIAL_UNITS commissioned units (default 200,000; the issue's full size is
// 1,000,000), then BENCH_RUNS times (default 3), alternating: (1) the baseline, one
// `UPDATE mint_units SET status = 'inactive'` over the batch; (2) MoveSerials' use case
// decommissioning the whole batch (chunks of 10,000, each one transaction writing the units'
// statuses and lifecycle rows, the KPI, the audit event and the EPCIS event). Before the first run
// and after each measured write the batch is restored and the tables vacuumed (not timed), so each
// write starts from the same tables. Prints each run and the median ratio move/baseline
// (the issue's target: at least 0.5). BENCH_JSON names a file for the figures as JSON.
// Then the same for the two other kinds of bulk move, each run against its own bare UPDATE:
// - list: the batch decommissioned by serial lists of 10,000 (the most a request lists), one
//   MoveSerials request per list, against a bare UPDATE of each list's rows (by batch and seq);
// - partner: the whole batch allocated to a partner (in SQL, not timed) and left issued, then
//   encoded by the partner's key as one seq-range move (only its allocated units move, each checked
//   against its allocation), against a bare UPDATE of the same rows.
// The batch's serials are the serial codec's (a brand serial key, the batch's ordinal, each serial
// the encoding of its seq, unit ids derived: null) as minting writes them since the codec, so a
// list's serials decode to their units; BENCH_SERIAL_CODEC=0 keeps the seeded stored serials
// (looked up on the serial index one by one, as before the codec).

import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { createSerialCipher, generateSerialCipherKey, sealSecret } from '@mint/domain';
import { moveSerials } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const units = Number(process.env['BENCH_SERIAL_UNITS'] ?? 200_000);
const runs = Number(process.env['BENCH_RUNS'] ?? 3);
const seeded = await seedUnits('bench_serials', units);
const client = new pg.Client({ connectionString: seeded.url });
await client.connect();
if (process.env['BENCH_SERIAL_CODEC'] !== '0') {
  // The brand's serial key (sealed as minting seals it), ordinal 1 for the batch, and its units' serials re-encoded.
  const key = generateSerialCipherKey(seeded.ctx.randomFill);
  const sealed = sealSecret(seeded.ctx.webhookSecretKeys, Buffer.from(key).toString('base64'), `brand_serial_keys:${seeded.brandId}`, seeded.ctx.randomFill);
  await client.query('insert into brand_serial_keys (brand_id, key_sealed, next_ordinal, created_at) values ($1, $2, 2, now())', [seeded.brandId, sealed]);
  await client.query('update mint_batches set serial_ordinal = 1 where brand_id = $1 and id = $2', [seeded.brandId, seeded.batchId]);
  const cipher = createSerialCipher(key);
  for (let from = 1; from <= units; from += 50_000) {
    const count = Math.min(50_000, units - from + 1);
    await client.query(
      `update mint_units u set serial = t.serial, id = null from unnest($3::int[], $4::text[]) as t(seq, serial)
      where u.brand_id = $1 and u.mint_batch_id = $2 and u.seq = t.seq`,
      [seeded.brandId, seeded.batchId, Array.from({ length: count }, (_, i) => from + i), cipher.encodeRange(1, from, count)],
    );
  }
  await client.query('VACUUM ANALYZE mint_units');
}
/** What the script writes to BENCH_JSON: per run, the bare UPDATE's and the move's milliseconds. */
export interface SerialMovesBenchResult {
  readonly units: number;
  readonly runs: readonly { readonly baselineMs: number; readonly moveMs: number }[];
  /** The batch moved by serial lists of 10,000, per run. */
  readonly listRuns: readonly { readonly baselineMs: number; readonly moveMs: number }[];
  /** The batch encoded by a partner's seq-range move, per run. */
  readonly partnerRuns: readonly { readonly baselineMs: number; readonly moveMs: number }[];
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
  const summary = (what: string, rs: number[]) =>
    process.stdout.write(`${what}: median ratio ${median(rs).toFixed(2)}x (min ${Math.min(...rs).toFixed(2)}, max ${Math.max(...rs).toFixed(2)})\n`);
  summary(`serial move of ${units.toLocaleString('en-US')} units`, ratios);

  // Lists: the batch's serials 10,000 at a time, one request each, against a bare UPDATE per list's rows.
  const listSize = 10_000;
  const serials = (await client.query<{ serial: string }>('select serial from mint_units where mint_batch_id = $1 order by seq', [seeded.batchId])).rows.map(
    (r) => r.serial,
  );
  const listFigures: { baselineMs: number; moveMs: number }[] = [];
  for (let run = 1; run <= runs; run++) {
    let t = performance.now();
    let updated = 0;
    for (let from = 1; from <= units; from += listSize) {
      const r = await client.query(`update mint_units set status = 'inactive' where brand_id = $1 and mint_batch_id = $2 and seq between $3 and $4`, [
        seeded.brandId,
        seeded.batchId,
        from,
        Math.min(units, from + listSize - 1),
      ]);
      updated += r.rowCount ?? 0;
    }
    const baselineMs = performance.now() - t;
    await restore();
    t = performance.now();
    let moved = 0;
    for (let i = 0; i < serials.length; i += listSize) {
      const m = await moveSerials(seeded.ctx, actor, {
        brandId: seeded.brandId,
        action: 'decommission',
        reason: 'recalled',
        target: { serials: serials.slice(i, i + listSize) },
        idempotencyKey: `bench-list-${run}-${i}`,
      });
      moved += m.moved;
    }
    const moveMs = performance.now() - t;
    if (moved !== units || updated !== units) throw new Error(`list: moved ${moved}, updated ${updated} of ${units}`);
    await restore();
    listFigures.push({ baselineMs, moveMs });
    process.stdout.write(
      `list run ${run}: bare UPDATEs ${Math.round(baselineMs)} ms, MoveSerials by lists ${Math.round(moveMs)} ms, ratio ${(baselineMs / moveMs).toFixed(2)}x\n`,
    );
  }
  summary(
    `serial-list moves of ${units.toLocaleString('en-US')} units (lists of ${listSize.toLocaleString('en-US')})`,
    listFigures.map((f) => f.baselineMs / f.moveMs),
  );

  // A partner's move: the batch allocated to it and issued; its key encodes the batch by one range move.
  const partnerId = randomUUID();
  await client.query(
    `insert into unit_allocations (brand_id, mint_batch_id, seq, partner_id, grant_id, request_id, allocated_at)
     select brand_id, mint_batch_id, seq, $3, $4, $5, now() from mint_units where brand_id = $1 and mint_batch_id = $2`,
    [seeded.brandId, seeded.batchId, partnerId, randomUUID(), randomUUID()],
  );
  const issue = async () => {
    await client.query(`update mint_units set status = 'inactive' where brand_id = $1 and mint_batch_id = $2`, [seeded.brandId, seeded.batchId]);
    await client.query('delete from unit_states');
    await client.query('delete from epcis_events');
    await client.query('VACUUM ANALYZE mint_units');
    await client.query('VACUUM ANALYZE unit_states');
    await client.query('VACUUM ANALYZE epcis_events');
    await client.query('VACUUM ANALYZE unit_allocations');
  };
  await issue();
  const partnerFigures: { baselineMs: number; moveMs: number }[] = [];
  for (let run = 1; run <= runs; run++) {
    let t = performance.now();
    const bare = await client.query(`update mint_units set status = 'inactive' where brand_id = $1 and mint_batch_id = $2`, [seeded.brandId, seeded.batchId]);
    const baselineMs = performance.now() - t;
    await issue();
    t = performance.now();
    const move = await moveSerials(
      seeded.ctx,
      { id: actor.id, partnerId },
      { brandId: seeded.brandId, action: 'encode', reason: null, target: { mintBatchId: seeded.batchId }, idempotencyKey: `bench-partner-${run}` },
      { runAll: true },
    );
    const moveMs = performance.now() - t;
    if (move.moved !== units || bare.rowCount !== units) throw new Error(`partner: moved ${move.moved}, updated ${bare.rowCount} of ${units}`);
    await issue();
    partnerFigures.push({ baselineMs, moveMs });
    process.stdout.write(
      `partner run ${run}: bare UPDATE ${Math.round(baselineMs)} ms, partner's MoveSerials ${Math.round(moveMs)} ms, ratio ${(baselineMs / moveMs).toFixed(2)}x\n`,
    );
  }
  summary(
    `partner move of ${units.toLocaleString('en-US')} units`,
    partnerFigures.map((f) => f.baselineMs / f.moveMs),
  );
  const json = process.env['BENCH_JSON'];
  if (json) writeFileSync(json, JSON.stringify({ units, runs: figures, listRuns: listFigures, partnerRuns: partnerFigures } satisfies SerialMovesBenchResult));
} finally {
  await client.end();
  await seeded.drop();
}
