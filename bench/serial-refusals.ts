// `npm run bench:serials:refusals`: the cost of a move's report when it refuses most units. Seeds a
// batch of BENCH_REFUSED_UNITS commissioned units (default 200,000), then asks MoveSerials to encode
// the whole batch: every unit is refused (wrong state: commissioned), chunk after chunk of 10,000.
// Each chunk is timed alone (the API's first, then the executor's step, continueSerialMove), and
// the report's stored bytes (the move row with its TOAST, and the refusal rows with their index)
// and the WAL written are read after the move. A report rewritten whole by each chunk grows every
// chunk's time and WAL with the refusals before it (quadratic in the move); a report of rows
// appended per chunk keeps them flat. Prints each chunk's time, the last chunks' over the first's,
// total time, bytes and WAL. The WAL is the cluster's (others' writes count too on a shared host).

import pg from 'pg';
import { continueSerialMove, moveSerials } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const units = Number(process.env['BENCH_REFUSED_UNITS'] ?? 200_000);
const seeded = await seedUnits('bench_refusals', units);
const client = new pg.Client({ connectionString: seeded.url });
await client.connect();
const lsn = async () => (await client.query<{ l: string }>('select pg_current_wal_lsn()::text as l')).rows[0]!.l;
const walSince = async (from: string) =>
  Number((await client.query<{ n: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as n', [from])).rows[0]!.n);
try {
  const users = await client.query<{ id: string }>('select id from users limit 1');
  const actor = { id: users.rows[0]!.id };
  const walStart = await lsn();
  const chunks: number[] = [];
  let t = performance.now();
  const started = await moveSerials(seeded.ctx, actor, {
    brandId: seeded.brandId,
    action: 'encode',
    reason: null,
    target: { mintBatchId: seeded.batchId },
    idempotencyKey: 'bench-refusals',
  });
  chunks.push(performance.now() - t);
  let status: string = started.status;
  let refused = started.refused;
  while (status === 'running') {
    t = performance.now();
    const next = (await continueSerialMove(seeded.ctx, seeded.brandId, started.moveId))!;
    chunks.push(performance.now() - t);
    status = next.status;
    refused = next.refused;
  }
  const wal = await walSince(walStart);
  if (refused !== units) throw new Error(`refused ${refused} of ${units}`);
  const size = async (table: string) =>
    Number((await client.query<{ n: string | null }>('select pg_total_relation_size(to_regclass($1)) as n', [table])).rows[0]!.n ?? 0);
  const stored = (await size('serial_moves')) + (await size('serial_move_refusals'));
  const total = chunks.reduce((a, b) => a + b, 0);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const head = mean(chunks.slice(1, 4));
  const tail = mean(chunks.slice(-3));
  process.stdout.write(`chunk ms: ${chunks.map((c) => Math.round(c)).join(' ')}\n`);
  process.stdout.write(
    `move refusing ${units.toLocaleString('en-US')} units in ${chunks.length} chunks: ${Math.round(total)} ms; last 3 chunks / chunks 2-4: ${(tail / head).toFixed(2)}x; ` +
      `report stored ${(stored / 1e6).toFixed(1)} MB; WAL ${(wal / 1e6).toFixed(1)} MB\n`,
  );
} finally {
  await client.end();
  await seeded.drop();
}
