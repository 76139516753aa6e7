// `npm run bench:aggregation`: packing and unpacking N commissioned units against a bare INSERT and a
// bare DELETE of the same unit_containers rows, same run.
// Seeds a batch of BENCH_AGGREGATION_UNITS commissioned units (default 100,000 for a quick run;
// the size: BENCH_AGGREGATION_UNITS=1000000), gives the brand a GS1 company prefix and mints
// one container per BENCH_PACK_ITEMS units (default 10,000: the most one PackContainer request
// names). Then BENCH_RUNS times (default 3), alternating:
//   (1) the baseline: for each container, one `INSERT INTO unit_containers ... SELECT FROM unnest`
//       of its units (the rows PackContainer writes, nothing else), then per container one
//       `DELETE FROM unit_containers WHERE container_id = ...`;
//   (2) PackContainer's use case for each container with its units' serials (each request one
//       transaction: the units read under their row locks with their states, the packing checks,
//       the compare-and-set insert, the request row, the EPCIS AggregationEvent and the audit
//       event), then UnpackContainer's (everything in the container) for each.
// Between the halves the tables are emptied and vacuumed (not timed). Prints each run and the
// median ratios baseline/use case (1.0 = as fast as the bare statements).
// Then, a packaging line's volume: BENCH_CAPTURE_CASES cases (default 1,000) of BENCH_CASE_UNITS
// units (default 10) packed BENCH_RUNS times, alternating:
//   (1) the baseline: one bare `INSERT INTO unit_containers ... SELECT FROM unnest` of all the
//       cases' units (the rows packing writes, nothing else);
//   (2) one EPCIS capture document of BENCH_CAPTURE_CASES AggregationEvents (ADD packing, one per
//       case), applied by captureEpcisDocument (schema check, every capture and packing rule, all
//       or nothing, the events stored);
//   (3) BENCH_PACK_CALLS cases (default 200) by one PackContainer call each (how a line packed
//       before capture documents).
// It prints cases/s of each and the ratios capture/bare and capture/per-call. BENCH_PARTS
// (`pack,capture` by default) picks the sections. BENCH_JSON names a file for the figures as JSON.

import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { captureEpcisDocument, mintContainers, packContainer, setContainerSettings, unpackContainer } from '@mint/usecases';
import { seedUnits } from './unit-seed.ts';

const units = Number(process.env['BENCH_AGGREGATION_UNITS'] ?? 100_000);
const perContainer = Number(process.env['BENCH_PACK_ITEMS'] ?? 10_000);
const runs = Number(process.env['BENCH_RUNS'] ?? 3);
const parts = new Set((process.env['BENCH_PARTS'] ?? 'pack,capture').split(','));
const captureCases = Number(process.env['BENCH_CAPTURE_CASES'] ?? 1000);
const caseUnits = Number(process.env['BENCH_CASE_UNITS'] ?? 10);
const packCalls = Number(process.env['BENCH_PACK_CALLS'] ?? 200);

/** The figures of one run, in milliseconds. */
export interface AggregationRun {
  readonly packMs: number;
  readonly packBaselineMs: number;
  readonly unpackMs: number;
  readonly unpackBaselineMs: number;
}

/** What the script writes to BENCH_JSON. */
export interface AggregationBenchResult {
  readonly units: number;
  readonly perContainer: number;
  readonly runs: readonly AggregationRun[];
  readonly capture?: { readonly cases: number; readonly caseUnits: number; readonly runs: readonly CaptureRun[] };
}

/** The figures of one run of the capture section, in cases per second. */
export interface CaptureRun {
  readonly bareCasesPerS: number;
  readonly captureCasesPerS: number;
  readonly perCallCasesPerS: number;
}

const seeded = await seedUnits('bench_aggregation', units);
const client = new pg.Client({ connectionString: seeded.url });
await client.connect();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const users = await client.query<{ id: string }>('select id from users limit 1');
  const actor = { id: users.rows[0]!.id };
  const brandId = seeded.brandId;
  await setContainerSettings(seeded.ctx, actor, { brandId, companyPrefix: '0614141', maxDepth: null });
  const containerCount = Math.ceil(units / perContainer);
  const ssccs: string[] = [];
  for (let i = 0; i < containerCount; i += 10_000) {
    ssccs.push(
      ...(
        await mintContainers(seeded.ctx, actor, {
          brandId,
          level: 'pallet',
          count: Math.min(10_000, containerCount - i),
          extensionDigit: 0,
          idempotencyKey: `mint-${i}`,
        })
      ).ssccs,
    );
  }
  const ids = (await client.query<{ id: string; sscc: string }>('select id, sscc from containers where brand_id = $1', [brandId])).rows;
  const idOf = new Map(ids.map((r) => [r.sscc, r.id]));
  const serials = (
    await client.query<{ serial: string }>('select serial from mint_units where brand_id = $1 and mint_batch_id = $2 order by seq', [brandId, seeded.batchId])
  ).rows.map((r) => r.serial);
  const slice = (i: number) => ({ from: i * perContainer + 1, to: Math.min(units, (i + 1) * perContainer) });
  const reset = async () => {
    await client.query('delete from unit_containers');
    await client.query('delete from container_ops');
    await client.query("delete from epcis_events where event_type = 'AggregationEvent'");
    await client.query("delete from mint_events where event_type in ('container_packed', 'container_unpacked')");
    await client.query('VACUUM ANALYZE unit_containers');
    await client.query('VACUUM ANALYZE container_ops');
  };
  process.stdout.write(`seeded ${units.toLocaleString('en-US')} units, ${containerCount} containers of up to ${perContainer.toLocaleString('en-US')}\n`);
  const result: AggregationRun[] = [];
  for (let run = 1; run <= (parts.has('pack') ? runs : 0); run++) {
    await reset();
    let t = performance.now();
    for (let i = 0; i < containerCount; i++) {
      const { from, to } = slice(i);
      await client.query(
        `insert into unit_containers (brand_id, mint_batch_id, seq, container_id, packed_at)
        select $1::uuid, $2::uuid, q, $3::uuid, now() from unnest($4::int[]) as t(q)`,
        [brandId, seeded.batchId, idOf.get(ssccs[i]!), Array.from({ length: to - from + 1 }, (_, k) => from + k)],
      );
    }
    const packBaselineMs = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < containerCount; i++)
      await client.query('delete from unit_containers where brand_id = $1 and container_id = $2', [brandId, idOf.get(ssccs[i]!)]);
    const unpackBaselineMs = performance.now() - t;
    await reset();
    t = performance.now();
    for (let i = 0; i < containerCount; i++) {
      const { from, to } = slice(i);
      const r = await packContainer(seeded.ctx, actor, {
        brandId,
        sscc: ssccs[i]!,
        serials: serials.slice(from - 1, to),
        ssccs: [],
        idempotencyKey: `pack-${run}-${i}`,
      });
      if (r.units !== to - from + 1) throw new Error(`packed ${r.units} of ${to - from + 1}`);
    }
    const packMs = performance.now() - t;
    t = performance.now();
    let unpacked = 0;
    for (let i = 0; i < containerCount; i++)
      unpacked += (await unpackContainer(seeded.ctx, actor, { brandId, sscc: ssccs[i]!, serials: [], ssccs: [], idempotencyKey: `unpack-${run}-${i}` })).units;
    const unpackMs = performance.now() - t;
    if (unpacked !== units) throw new Error(`unpacked ${unpacked} of ${units}`);
    result.push({ packMs, packBaselineMs, unpackMs, unpackBaselineMs });
    const rate = (ms: number) => Math.round(units / (ms / 1000)).toLocaleString('en-US');
    process.stdout.write(
      `run ${run}: pack ${Math.round(packMs)} ms (${rate(packMs)} units/s) vs bare INSERT ${Math.round(packBaselineMs)} ms (${rate(packBaselineMs)} rows/s), ` +
        `ratio ${(packBaselineMs / packMs).toFixed(2)}x; unpack ${Math.round(unpackMs)} ms (${rate(unpackMs)} units/s) vs bare DELETE ${Math.round(unpackBaselineMs)} ms ` +
        `(${rate(unpackBaselineMs)} rows/s), ratio ${(unpackBaselineMs / unpackMs).toFixed(2)}x\n`,
    );
  }
  const ratios = (pick: (r: AggregationRun) => number) => result.map(pick);
  const pack = ratios((r) => r.packBaselineMs / r.packMs);
  const unpack = ratios((r) => r.unpackBaselineMs / r.unpackMs);
  if (result.length > 0)
    process.stdout.write(
      `pack of ${units.toLocaleString('en-US')} units: median ratio ${median(pack).toFixed(2)}x (min ${Math.min(...pack).toFixed(2)}, max ${Math.max(...pack).toFixed(2)}); ` +
        `unpack: median ratio ${median(unpack).toFixed(2)}x (min ${Math.min(...unpack).toFixed(2)}, max ${Math.max(...unpack).toFixed(2)})\n`,
    );
  const capture = parts.has('capture') ? await captureSection(actor, brandId, serials, reset) : [];
  const json = process.env['BENCH_JSON'];
  if (json)
    writeFileSync(
      json,
      JSON.stringify({ units, perContainer, runs: result, capture: { cases: captureCases, caseUnits, runs: capture } } satisfies AggregationBenchResult),
    );
} finally {
  await client.end();
  await seeded.drop();
}

/** The capture section: cases/s of a bare INSERT, of one capture document and of one PackContainer call a case. */
async function captureSection(actor: { id: string }, brandId: string, serials: readonly string[], reset: () => Promise<void>): Promise<CaptureRun[]> {
  if (captureCases * caseUnits > serials.length)
    throw new Error(`BENCH_CAPTURE_CASES x BENCH_CASE_UNITS needs ${captureCases * caseUnits} units; ${serials.length} seeded`);
  const cases: string[] = [];
  for (let i = 0; i < captureCases; i += 10_000) {
    const got = await mintContainers(seeded.ctx, actor, {
      brandId,
      level: 'case',
      count: Math.min(10_000, captureCases - i),
      extensionDigit: 1,
      idempotencyKey: `cases-${i}`,
    });
    cases.push(...got.ssccs);
  }
  const rows = (
    await client.query<{ id: string; sscc: string; resolver_base_url: string }>('select id, sscc, resolver_base_url from containers where brand_id = $1', [
      brandId,
    ])
  ).rows;
  const caseRow = new Map(rows.map((r) => [r.sscc, r]));
  const base = caseRow.get(cases[0]!)!.resolver_base_url.replace(/\/+$/, '');
  const unitsOf = (c: number) => serials.slice(c * caseUnits, (c + 1) * caseUnits);
  process.stdout.write(`capture: ${captureCases} cases of ${caseUnits} units a document; ${packCalls} cases by PackContainer calls\n`);
  const out: CaptureRun[] = [];
  const rate = (n: number, ms: number) => n / (ms / 1000);
  for (let run = 1; run <= runs; run++) {
    await reset();
    let t = performance.now();
    await client.query(
      `insert into unit_containers (brand_id, mint_batch_id, seq, container_id, packed_at)
      select $1::uuid, $2::uuid, q, c, now() from unnest($3::int[], $4::uuid[]) as t(q, c)`,
      [
        brandId,
        seeded.batchId,
        Array.from({ length: captureCases * caseUnits }, (_, k) => k + 1),
        Array.from({ length: captureCases * caseUnits }, (_, k) => caseRow.get(cases[Math.floor(k / caseUnits)]!)!.id),
      ],
    );
    const bareMs = performance.now() - t;
    await reset();
    const at = new Date().toISOString();
    const document = {
      '@context': ['https://ref.gs1.org/standards/epcis/epcis-context.jsonld'],
      type: 'EPCISDocument',
      schemaVersion: '2.0',
      creationDate: at,
      epcisBody: {
        eventList: cases.map((sscc, c) => ({
          type: 'AggregationEvent',
          eventID: `urn:uuid:${randomUUID()}`,
          eventTime: at,
          eventTimeZoneOffset: '+00:00',
          parentID: `${base}/00/${sscc}`,
          childEPCs: unitsOf(c).map((s) => `${base}/u/${s}`),
          action: 'ADD',
          bizStep: 'packing',
        })),
      },
    };
    t = performance.now();
    const captured = await captureEpcisDocument(seeded.ctx, actor, brandId, document);
    const captureMs = performance.now() - t;
    if (captured.captured !== captureCases) throw new Error(`captured ${captured.captured} of ${captureCases}`);
    await reset();
    t = performance.now();
    for (let c = 0; c < packCalls; c++) {
      const r = await packContainer(seeded.ctx, actor, { brandId, sscc: cases[c]!, serials: unitsOf(c), ssccs: [], idempotencyKey: `case-${run}-${c}` });
      if (r.units !== caseUnits) throw new Error(`packed ${r.units} of ${caseUnits}`);
    }
    const perCallMs = performance.now() - t;
    const r = { bareCasesPerS: rate(captureCases, bareMs), captureCasesPerS: rate(captureCases, captureMs), perCallCasesPerS: rate(packCalls, perCallMs) };
    out.push(r);
    process.stdout.write(
      `capture run ${run}: one document of ${captureCases} cases ${Math.round(captureMs)} ms (${Math.round(r.captureCasesPerS)} cases/s); bare INSERT ${Math.round(bareMs)} ms ` +
        `(${Math.round(r.bareCasesPerS)} cases/s); PackContainer per case ${Math.round(r.perCallCasesPerS)} cases/s; ` +
        `capture/bare ${(r.captureCasesPerS / r.bareCasesPerS).toFixed(3)}x, capture/per-call ${(r.captureCasesPerS / r.perCallCasesPerS).toFixed(1)}x\n`,
    );
  }
  const spread = (xs: number[], digits: number) =>
    `${median(xs).toFixed(digits)} (min ${Math.min(...xs).toFixed(digits)}, max ${Math.max(...xs).toFixed(digits)})`;
  process.stdout.write(
    `capture of ${captureCases} cases: median ${spread(
      out.map((r) => r.captureCasesPerS),
      0,
    )} cases/s; capture/bare ${spread(
      out.map((r) => r.captureCasesPerS / r.bareCasesPerS),
      3,
    )}x; capture/per-call ${spread(
      out.map((r) => r.captureCasesPerS / r.perCallCasesPerS),
      1,
    )}x\n`,
  );
  return out;
}
