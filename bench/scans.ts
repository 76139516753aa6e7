// `npm run bench:scans`: a replay of synthetic scans through the edge ingest (recordScanEvents with
// the scan rules queued behind it, as the API runs them) into a scratch database whose day
// partitions the sweeper's upkeep made; after each batch (its call and its rules waited for) the
// same rows go through a bare COPY into a copy of scan_events partitioned the same way, so the
// ingest and its baseline meet the same load of a shared machine.
//   - BENCH_SCANS scans (default 1,000,000) over BENCH_SCAN_UNITS minted serial units of one brand
//     (default 100,000; bench/unit-seed.ts), in time order over 3 simulated UTC days ending before now,
//     ingested in batches of 10,000.
//   - Genuine scans: Zipf popularity over units (s = 1), a daily rhythm (hour weights peaking in the
//     evening), 30 countries (each unit scanned in its home country), distinct visitor hashes (a
//     unit's visitors of a day drawn from 5 of its own, so within the clone threshold of 20).
//   - Injected: 1,000 cloned serials of the same batch (700 scanned from two foreign countries
//     within 6 hours, 300 by 25 distinct visitors in one day) and 500 scans of 500 units of a
//     voided batch (the edge answered 410, outcome `gone`).
// The use cases run on a replay clock (the newest scan of the batch being ingested), so the rules'
// per-minute alert budget counts simulated minutes; as one batch of 10,000 still gets one minute's
// budget, the brand's alerts_per_minute is set to its maximum (1,000). Everything else is the
// product's defaults (24 h clone window, over 20 visitors a day, 100,000 units remembered).
// Reports recall of the injected clones and withdrawn-unit scans among the alerts raised, false
// positives among the genuine units scanned, alert latency (a batch's ingest call started -> its
// alerts committed), the ingest rate (calls and rules) against the bare COPY (the sums' ratio and
// the batches' p10-p90),
// and the storage per million scans: raw (day partitions with their indexes) and daily rollups
// (made by the sweeper's upkeep after the replay). Then the resolver's unit-scan p99 with the
// rules on against off: two API processes (bench/scans-api.ts; off: a scan recorder whose
// onWritten does nothing) against the replayed database, loaded in BENCH_SCAN_LOAD_RUNS interleaved
// rounds (default 6; on, off, then off, on, ...) of a steady load of random unit scans
// (BENCH_SCAN_RATE requests/s, default 2,000, 10 connections, BENCH_SCAN_LOAD_SECONDS s a side,
// default 5; 0 skips it); reported as each round's on/off ratio, their median and range, as one
// run's p99 on a shared machine can be many times another's, and as each API process's CPU per
// answered scan (the rules run in the API process), which the machine's other load moves less.
// BENCH_JSON names a file for the figures as JSON.

import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { IngestScanInput } from '@mint/domain';
import { scanLedgerSize } from '@mint/db';
import { createScanAlerts, createUseCaseContext, maintainScanLedger, recordScanEvents, updateScanAlertSettings, type ScanAlerts } from '@mint/usecases';
import { run, query } from '../test/support/sql.ts';
import { seedUnits } from './unit-seed.ts';
import { apiNodeFlags, percentile, spawnServer } from './child-server.ts';
import { cpuMsOf } from './services.ts';
import { steadyLoad } from './steady-load.ts';

/** The figures of one replay, written to BENCH_JSON. */
export interface ScansBenchResult {
  readonly scans: number;
  readonly units: number;
  readonly clones: number;
  readonly withdrawnScans: number;
  /** Injected clones and withdrawn-unit scans alerted on, over all injected. */
  readonly recall: number;
  /** Genuine units with a clone alert, over the genuine units scanned. */
  readonly falsePositiveRate: number;
  readonly genuineUnitsScanned: number;
  readonly latencyP99Ms: number;
  readonly ingestRowsPerSecond: number;
  readonly copyRowsPerSecond: number;
  /** Ingest rate over the bare COPY's. */
  readonly ingestToCopy: number;
  /** Bytes of raw scans (day partitions with their indexes) per million scans. */
  readonly rawBytesPerMillion: number;
  /** Bytes of the daily rollups (with their index) per million scans. */
  readonly rollupBytesPerMillion: number;
  /** The resolver's unit-scan p99 (median of the rounds) with the rules on and off, and the median of the rounds' on/off ratios with their range; NaN when not loaded. */
  loadRuns: number;
  resolverP99OnMs: number;
  resolverP99OffMs: number;
  resolverOnToOff: number;
  resolverRatioMin: number;
  resolverRatioMax: number;
  /** The API process's CPU per answered unit scan (µs, median of the rounds) with the rules on and off. */
  apiCpuUsPerScanOn: number;
  apiCpuUsPerScanOff: number;
}

const total = Number(process.env['BENCH_SCANS'] ?? 1_000_000);
const unitCount = Number(process.env['BENCH_SCAN_UNITS'] ?? 100_000);
const batchSize = 10_000;
const loadSeconds = Number(process.env['BENCH_SCAN_LOAD_SECONDS'] ?? 5);
const loadRate = Number(process.env['BENCH_SCAN_RATE'] ?? 2_000);
const loadConnections = 10;
const loadRuns = Number(process.env['BENCH_SCAN_LOAD_RUNS'] ?? 6);
const clones = 1_000;
const withdrawnScans = 500;
const days = 3;

/** A small seeded PRNG (mulberry32), so runs replay the same scans. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(40);
const pick = (n: number) => Math.floor(rand() * n);

const countries = [
  'DE',
  'FR',
  'IT',
  'ES',
  'NL',
  'BE',
  'AT',
  'PL',
  'SE',
  'DK',
  'FI',
  'PT',
  'IE',
  'CZ',
  'HU',
  'RO',
  'GR',
  'US',
  'CA',
  'MX',
  'BR',
  'AR',
  'JP',
  'KR',
  'CN',
  'IN',
  'AU',
  'ZA',
  'GB',
  'CH',
];
const classes = ['browser', 'browser', 'browser', 'app', 'bot', 'other'];
/** Hour weights of the daily rhythm: low at 04:00, high at 19:00 UTC. */
const hourCdf = (() => {
  const w = Array.from({ length: 24 }, (_, h) => 1.1 + Math.cos(((h - 19) / 24) * 2 * Math.PI));
  const sum = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  return w.map((x) => (acc += x / sum));
})();
const startDay = Math.floor(Date.now() / 86_400_000) - days; // UTC midnight, 3 whole days before today
const dayStart = (d: number) => (startDay + d) * 86_400_000;
function rhythmTime(): number {
  const r = rand();
  let h = 0;
  while (hourCdf[h]! < r) h++;
  return dayStart(pick(days)) + h * 3_600_000 + Math.floor(rand() * 3_600_000);
}

// Zipf CDF over units (s = 1).
const zipfCdf = new Float64Array(unitCount);
{
  let acc = 0;
  for (let i = 0; i < unitCount; i++) zipfCdf[i] = acc += 1 / (i + 1);
  for (let i = 0; i < unitCount; i++) zipfCdf[i]! /= acc;
}
function zipfUnit(): number {
  const r = rand();
  let lo = 0,
    hi = unitCount - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (zipfCdf[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
// Popularity rank -> unit seq, shuffled so popular units are spread over the batch.
const unitOfRank = new Int32Array(unitCount);
for (let i = 0; i < unitCount; i++) unitOfRank[i] = i + 1;
for (let i = unitCount - 1; i > 0; i--) {
  const j = pick(i + 1);
  [unitOfRank[i], unitOfRank[j]] = [unitOfRank[j]!, unitOfRank[i]!];
}
const home = new Uint8Array(unitCount + 1);
for (let i = 1; i <= unitCount; i++) home[i] = pick(countries.length);

// The scans as columns: time, unit (seq; negative: -k is unit k of the voided batch), country, visitor key.
const at = new Float64Array(total);
const unit = new Int32Array(total);
const country = new Uint8Array(total);
const visitor: string[] = new Array(total);
let n = 0;
const hex = (x: number, w: number) => x.toString(16).padStart(w, '0');
const cloneSet = new Set<number>();
while (cloneSet.size < clones) cloneSet.add(1 + pick(unitCount));
let cloneKind = 0;
for (const u of cloneSet) {
  if (cloneKind++ % 10 < 7) {
    // Copies scanned in two foreign countries within 6 hours.
    let a = pick(countries.length),
      b = pick(countries.length);
    while (a === home[u]) a = pick(countries.length);
    while (b === home[u] || b === a) b = pick(countries.length);
    const t = dayStart(0) + pick((days * 24 - 7) * 3_600_000);
    for (const [k, c] of [a, a, b].entries()) {
      at[n] = t + k * 2 * 3_600_000 + pick(3_600_000);
      unit[n] = u;
      country[n] = c;
      visitor[n] = `c${hex(u, 8)}k${k}${hex(pick(1 << 30), 8)}`;
      n++;
    }
  } else {
    // 25 distinct visitors in one UTC day, from the unit's home country.
    const d = dayStart(pick(days));
    for (let k = 0; k < 25; k++) {
      at[n] = d + pick(86_400_000);
      unit[n] = u;
      country[n] = home[u]!;
      visitor[n] = `c${hex(u, 8)}v${hex(k, 4)}${hex(pick(1 << 30), 8)}`;
      n++;
    }
  }
}
const injectedCloneScans = n;
for (let k = 1; k <= withdrawnScans; k++) {
  at[n] = rhythmTime();
  unit[n] = -k;
  country[n] = pick(countries.length);
  visitor[n] = `w${hex(k, 8)}${hex(pick(1 << 30), 8)}`;
  n++;
}
if (n > total) throw new Error(`BENCH_SCANS=${total} is too few for the ${n} injected scans`);
while (n < total) {
  const u = unitOfRank[zipfUnit()]!;
  const t = rhythmTime();
  at[n] = t;
  unit[n] = u;
  country[n] = home[u]!;
  visitor[n] = `g${hex(u, 8)}d${Math.floor(t / 86_400_000)}r${pick(5)}`;
  n++;
}
const order = new Uint32Array(total);
for (let i = 0; i < total; i++) order[i] = i;
order.sort((a, b) => at[a]! - at[b]!);

const md5Serials = new Map<number, string>();
const quantile = (sorted: readonly number[], q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);

console.log(
  `bench:scans: ${total.toLocaleString('en-US')} scans over ${unitCount.toLocaleString('en-US')} units, ${days} simulated days, ` +
    `${clones} cloned serials (${injectedCloneScans.toLocaleString('en-US')} scans), ${withdrawnScans} scans of voided units; batches of ${batchSize.toLocaleString('en-US')}`,
);
const seeded = await seedUnits('bench_scans', unitCount);
try {
  const { brandId, gtin } = seeded;
  // The replay's clock: the time of the newest scan of the batch being ingested, as an edge shipping
  // its scans as they happen would see it (the rules' per-minute budget counts minutes of this clock).
  let replayNow = Date.now();
  const ctx = createUseCaseContext({ db: seeded.db, publicBaseUrl: seeded.publicBaseUrl, clock: () => new Date(replayNow) });
  const em = seeded.db.em.fork();
  // Serials as seeded (md5 of the seq), read back; the voided batch: 500 units of a batch with status voided.
  for (const r of await query<{ seq: number; serial: string }>(em, 'select seq, serial from mint_units where brand_id = ? and mint_batch_id = ?', [
    brandId,
    seeded.batchId,
  ])) {
    md5Serials.set(Number(r.seq), r.serial);
  }
  const voidBatch = randomUUID();
  const voidJob = randomUUID();
  const t0 = new Date(dayStart(0) - 86_400_000);
  await run(
    em,
    `insert into mint_jobs (brand_id, id, status, scope_type, requested_quantity, product_id, lease_token, attempts, created_at, updated_at, finished_at)
     select brand_id, ?, status, scope_type, ?, product_id, 1, 0, ?, ?, ? from mint_jobs where id = (select mint_job_id from mint_batches where id = ?)`,
    [voidJob, withdrawnScans, t0, t0, t0, seeded.batchId],
  );
  await run(
    em,
    `insert into mint_batches (brand_id, id, mint_job_id, product_id, status, identity_mode, activation_mode, requested_quantity, minted_quantity,
       resolver_base_url, gtin, created_at, updated_at)
     select brand_id, ?, ?, product_id, 'voided', identity_mode, activation_mode, ?, ?, resolver_base_url, gtin, ?, ?
     from mint_batches where id = ?`,
    [voidBatch, voidJob, withdrawnScans, withdrawnScans, t0, t0, seeded.batchId],
  );
  await run(
    em,
    `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at)
     select ?::uuid, gen_random_uuid(), ?::uuid, g, 'VOID' || lpad(g::text, 6, '0'), 'active', ?, ?
     from generate_series(1, ?::int) g`,
    [brandId, voidBatch, t0, t0, withdrawnScans],
  );
  const serialOf = (u: number) => (u < 0 ? `VOID${String(-u).padStart(6, '0')}` : md5Serials.get(u)!);
  await updateScanAlertSettings(ctx, { id: randomUUID() }, { brandId, patch: { alertsPerMinute: 1_000 } });

  // The rules as the API runs them (queued behind the ingest calls), observed: each batch's alerts
  // counted with the time they were committed, from the start of the ingest call that wrote them.
  const batchStarts: number[] = [];
  const latencies: number[] = [];
  let rulesMs = 0;
  let ruleBatches = 0;
  const alerts: ScanAlerts = createScanAlerts(ctx, undefined, {
    onBatch: (raised, ms) => {
      const latency = performance.now() - batchStarts[ruleBatches++]!;
      rulesMs += ms;
      for (let i = 0; i < raised; i++) latencies.push(latency);
    },
    onError: (err) => {
      throw err;
    },
  });
  /** Batches whose written scans reached the rules out of time order (sent in order). */
  let unordered = 0;
  const row = (i: number): IngestScanInput => {
    const u = unit[i]!;
    return {
      scannedAt: new Date(at[i]!),
      kind: 'serial',
      gtin,
      identifier: serialOf(u),
      lot: null,
      outcome: u < 0 ? 'gone' : 'resolved',
      representation: 'redirect',
      linkType: null,
      country: countries[country[i]!]!,
      clientClass: classes[i % classes.length]!,
      visitor: visitor[i]!,
      count: 1,
    };
  };
  // The day partitions of the simulated days, as the executor's sweeper makes them ahead.
  await maintainScanLedger(createUseCaseContext({ db: seeded.db, publicBaseUrl: seeded.publicBaseUrl }), { retentionDays: 0 });
  // The baseline: the same rows through a bare COPY into a copy of scan_events (partitioned by day
  // as it is, its indexes and defaults), unit state precomputed, a batch after each ingested one,
  // so both meet the same load of the shared machine.
  await run(em, 'create table scan_events_copy (like scan_events including all) partition by range (scanned_at)');
  for (let d = -1; d <= days; d++) {
    await run(
      em,
      `create table scan_events_copy_${d + 1} partition of scan_events_copy for values from ('${new Date(dayStart(d)).toISOString()}') to ('${new Date(dayStart(d + 1)).toISOString()}')`,
    );
  }
  await run(em, 'create table scan_events_copy_default partition of scan_events_copy default');
  const client = new pg.Client({ connectionString: seeded.url });
  await client.connect();
  const copyBatch = async (from: number) => {
    let chunk = '';
    for (let k = from; k < Math.min(total, from + batchSize); k++) {
      const i = order[k]!;
      const u = unit[i]!;
      chunk +=
        `${brandId}\t${new Date(at[i]!).toISOString()}\tserial\t${gtin}\t${serialOf(u)}\t\\N\t${u < 0 ? 'gone' : 'resolved'}\tredirect\t\\N\tt\tactive\t1\t` +
        `${countries[country[i]!]}\t${classes[i % classes.length]}\t${visitor[i]}\tingest\n`;
    }
    await pipeline(
      Readable.from([chunk]),
      client.query(
        copyFrom(
          'copy scan_events_copy (brand_id, scanned_at, kind, gtin, identifier, lot, outcome, representation, link_type, unit_known, unit_status, scans, country, client_class, visitor, source) from stdin',
        ),
      ),
    );
  };
  // Each batch: the ingest call and the rules on its scans (waited for, so the rules' work counts
  // in full and overlaps nothing), then the same rows' COPY.
  let accepted = 0;
  let ingestMs = 0;
  let callsMs = 0;
  let copyMs = 0;
  const batchRatios: number[] = [];
  try {
    for (let from = 0, b = 0; from < total; from += batchSize, b++) {
      const scans: IngestScanInput[] = [];
      for (let k = from; k < Math.min(total, from + batchSize); k++) scans.push(row(order[k]!));
      replayNow = at[order[Math.min(total, from + batchSize) - 1]!]! + 1_000;
      const started = performance.now();
      batchStarts.push(started);
      const outcome = await recordScanEvents(ctx, { brandId, batchKey: `replay-${b}`, scans }, alerts);
      const answered = performance.now();
      await alerts.drained();
      const ingested = performance.now();
      if (outcome.rejected.length > 0) throw new Error(`rows refused: ${JSON.stringify(outcome.rejected.slice(0, 3))}`);
      for (let k = 1; k < outcome.unitScans.length; k++)
        if (outcome.unitScans[k]!.scannedAt < outcome.unitScans[k - 1]!.scannedAt) {
          unordered++;
          break;
        }
      accepted += outcome.accepted;
      await copyBatch(from);
      const copied = performance.now() - ingested;
      ingestMs += ingested - started;
      callsMs += answered - started;
      copyMs += copied;
      batchRatios.push(copied / (ingested - started));
    }
  } finally {
    await client.end();
  }
  batchRatios.sort((x, y) => x - y);

  // The closed days rolled up as the executor's sweeper does it, and the ledger's size.
  const rollupStart = performance.now();
  const upkeep = await maintainScanLedger(createUseCaseContext({ db: seeded.db, publicBaseUrl: seeded.publicBaseUrl }), { retentionDays: 0 });
  const rollupMs = performance.now() - rollupStart;
  await run(em, 'vacuum analyze scan_events');
  await run(em, 'vacuum analyze scan_daily_rollups');
  const size = await scanLedgerSize(em);

  // Recall and false positives from the alert events committed.
  const raised = await query<{ event_type: string; entity_id: string }>(
    em,
    `select event_type, entity_id from mint_events where brand_id = ? and event_type in ('scan_clone_suspected', 'scan_withdrawn_unit', 'scan_never_issued_serial')`,
    [brandId],
  );
  const seqOfSerial = new Map([...md5Serials].map(([seq, serial]) => [serial, seq]));
  const cloneHits = new Set<number>();
  const falseUnits = new Set<number>();
  const withdrawnHits = new Set<string>();
  let otherAlerts = 0;
  for (const r of raised) {
    const serial = r.entity_id.split(' ')[1]!;
    if (r.event_type === 'scan_clone_suspected') {
      const seq = seqOfSerial.get(serial);
      if (seq !== undefined && cloneSet.has(seq)) cloneHits.add(seq);
      else if (seq !== undefined) falseUnits.add(seq);
      else otherAlerts++;
    } else if (r.event_type === 'scan_withdrawn_unit' && serial.startsWith('VOID')) withdrawnHits.add(serial);
    else otherAlerts++;
  }
  const missed: string[] = [];
  for (let i = 0; i < injectedCloneScans + withdrawnScans; i++) {
    const u = unit[i]!;
    if (u < 0 ? !withdrawnHits.has(serialOf(u)) : !cloneHits.has(u)) missed.push(`${serialOf(u)} ${new Date(at[i]!).toISOString()}`);
  }
  const genuineScanned = new Set<number>();
  for (let i = injectedCloneScans + withdrawnScans; i < total; i++) if (!cloneSet.has(unit[i]!)) genuineScanned.add(unit[i]!);
  latencies.sort((a, b) => a - b);
  const result: ScansBenchResult & Record<string, number> = {
    loadRuns,
    resolverP99OnMs: NaN,
    resolverP99OffMs: NaN,
    resolverOnToOff: NaN,
    resolverRatioMin: NaN,
    resolverRatioMax: NaN,
    apiCpuUsPerScanOn: NaN,
    apiCpuUsPerScanOff: NaN,
    scans: total,
    units: unitCount,
    accepted,
    clones,
    withdrawnScans,
    cloneRecall: cloneHits.size / clones,
    withdrawnRecall: withdrawnHits.size / withdrawnScans,
    recall: (cloneHits.size + withdrawnHits.size) / (clones + withdrawnScans),
    falsePositiveUnits: falseUnits.size,
    genuineUnitsScanned: genuineScanned.size,
    falsePositiveRate: falseUnits.size / genuineScanned.size,
    otherAlerts,
    alerts: latencies.length,
    latencyP50Ms: quantile(latencies, 0.5),
    latencyP99Ms: quantile(latencies, 0.99),
    latencyMaxMs: latencies.at(-1) ?? NaN,
    ingestMs,
    rulesMs,
    ingestRowsPerSecond: total / (ingestMs / 1000),
    copyMs,
    copyRowsPerSecond: total / (copyMs / 1000),
    ingestToCopy: copyMs / ingestMs,
    callsMs,
    callsToCopy: copyMs / callsMs,
    batchRatioP10: quantile(batchRatios, 0.1),
    batchRatioP90: quantile(batchRatios, 0.9),
    rollupMs,
    daysRolledUp: upkeep.daysRolledUp,
    rawRows: size.rawRows,
    rollupRows: size.rollupRows,
    rawBytesPerMillion: size.rawBytes / (total / 1e6),
    rollupBytesPerMillion: size.rollupBytes / (total / 1e6),
  };
  const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const rate = (x: number) => `${Math.round(x).toLocaleString('en-US')} rows/s`;
  console.log(
    `recall: ${pct(result.recall)} (clones ${cloneHits.size}/${clones}, withdrawn-unit scans ${withdrawnHits.size}/${withdrawnScans}); target >= 99 %: ${met(result.recall >= 0.99)}`,
  );
  console.log(
    `false positives: ${falseUnits.size} of ${genuineScanned.size.toLocaleString('en-US')} genuine units scanned = ${pct(result.falsePositiveRate)}; target <= 0.1 %: ${met(result.falsePositiveRate <= 0.001)}` +
      (otherAlerts > 0 ? ` (${otherAlerts} other alerts)` : ''),
  );
  console.log(
    `alert latency (ingest call started -> alert committed), ${latencies.length} alerts: p50 ${result.latencyP50Ms.toFixed(0)} ms, p99 ${result.latencyP99Ms.toFixed(0)} ms, ` +
      `max ${result.latencyMaxMs.toFixed(0)} ms; target p99 <= 60 s: ${met(result.latencyP99Ms <= 60_000)}`,
  );
  console.log(
    `ingest, batches interleaved with a bare COPY of the same rows: ${(ingestMs / 1000).toFixed(1)} s with the rules waited for ` +
      `(the calls answered in ${(callsMs / 1000).toFixed(1)} s, ratio ${result.callsToCopy.toFixed(2)}; the rules ${(rulesMs / 1000).toFixed(1)} s: deciding, writing alerts, marking units suspect), ` +
      `${rate(result.ingestRowsPerSecond)}; COPY: ${(copyMs / 1000).toFixed(1)} s, ${rate(result.copyRowsPerSecond)}; ` +
      `ratio ${result.ingestToCopy.toFixed(2)} (batches p10-p90 ${result.batchRatioP10.toFixed(2)}-${result.batchRatioP90.toFixed(2)}); target >= 0.5: ${met(result.ingestToCopy >= 0.5)}`,
  );
  console.log(`batches whose written scans reached the rules out of time order: ${unordered} of ${Math.ceil(total / batchSize)}`);
  const mib = (x: number) => `${(x / 1048576).toFixed(1)} MiB`;
  console.log(
    `storage per million scans: raw ${mib(result.rawBytesPerMillion)} (${size.rawRows.toLocaleString('en-US')} rows in day partitions, with indexes), ` +
      `daily rollups ${mib(result.rollupBytesPerMillion)} (${size.rollupRows.toLocaleString('en-US')} rows); rolled up ${upkeep.daysRolledUp} brand days in ${(rollupMs / 1000).toFixed(1)} s`,
  );
  if (missed.length > 0) console.log(`scans of injected units without an alert (first 10): ${missed.slice(0, 10).join(', ')}`);
  // The resolver's unit scans with the rules on against off: two API processes started once (the
  // rules on in one, off in the other) and loaded in interleaved rounds, on then off then on ...,
  // each round warmed up for 1 s, then a steady load of random unit scans; a round's ratio is its
  // on p99 over the off p99 of the round next to it.
  const resolverP99: Record<'on' | 'off', number[]> = { on: [], off: [] };
  const roundRatios: number[] = [];
  const loadErrors = { on: 0, off: 0 };
  const cpuPerScan: Record<'on' | 'off', number[]> = { on: [], off: [] };
  if (loadSeconds > 0) {
    const { slug } = seeded;
    const servers = {
      on: await spawnServer([...apiNodeFlags, new URL('./scans-api.ts', import.meta.url).pathname, 'on', seeded.url], 'API (rules on)'),
      off: await spawnServer([...apiNodeFlags, new URL('./scans-api.ts', import.meta.url).pathname, 'off', seeded.url], 'API (rules off)'),
    };
    try {
      let seed = 0;
      for (let round = 0; round < loadRuns; round++) {
        // The side that goes first alternates, so neither always follows the other.
        for (const mode of (round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) as ('on' | 'off')[]) {
          const port = servers[mode].port;
          const offset = (seed += 1_000_003);
          const request = (k: number) =>
            Buffer.from(
              `GET /r/${slug}/01/${gtin}/21/${serialOf(1 + (((k + offset) * 7_919) % unitCount))} HTTP/1.1\r\n` +
                `Host: 127.0.0.1:${port}\r\nAccept: text/html\r\nUser-Agent: Mozilla/5.0 (bench)\r\n\r\n`,
              'latin1',
            );
          await steadyLoad({ port, connections: loadConnections, rate: loadRate, seconds: 1, request });
          const cpuBefore = cpuMsOf(servers[mode].child.pid!);
          const load = await steadyLoad({ port, connections: loadConnections, rate: loadRate, seconds: loadSeconds, request: (k) => request(k + 500_009) });
          const cpuAfter = cpuMsOf(servers[mode].child.pid!);
          // The API process's CPU per answered scan (the rules run in it): steadier than a p99 on a shared machine.
          if (cpuBefore !== null && cpuAfter !== null) cpuPerScan[mode].push(((cpuAfter - cpuBefore) * 1000) / Math.max(1, load.latencies.length));
          // 307 to the passport; 200 for a unit the replay marked suspect (its identity page with the caution).
          const bad = Object.entries(load.statuses).filter(([status]) => status !== '307' && status !== '200');
          if (bad.length > 0) throw new Error(`resolver answers with the rules ${mode}: ${JSON.stringify(load.statuses)}`);
          // Requests the load could not complete (a machine too busy to keep the pace) are counted and printed.
          loadErrors[mode] += load.errors;
          resolverP99[mode].push(percentile(load.latencies, 99));
        }
        roundRatios.push(resolverP99.on[round]! / resolverP99.off[round]!);
      }
    } finally {
      for (const server of Object.values(servers)) {
        server.child.kill('SIGTERM');
        await new Promise((resolve) => server.child.once('exit', resolve));
      }
    }
  }
  const median = (xs: readonly number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  result.resolverP99OnMs = median(resolverP99.on);
  result.resolverP99OffMs = median(resolverP99.off);
  result.resolverOnToOff = median(roundRatios);
  result.resolverRatioMin = Math.min(...roundRatios);
  result.resolverRatioMax = Math.max(...roundRatios);
  result.apiCpuUsPerScanOn = median(cpuPerScan.on);
  result.apiCpuUsPerScanOff = median(cpuPerScan.off);

  if (loadSeconds > 0) {
    console.log(
      `resolver unit-scan p99 at ${loadRate.toLocaleString('en-US')} requests/s, ${loadConnections} connections, ${loadRuns} interleaved rounds of ${loadSeconds} s a side: ` +
        `rules on ${resolverP99.on.map((x) => x.toFixed(2)).join(', ')} ms, off ${resolverP99.off.map((x) => x.toFixed(2)).join(', ')} ms; ` +
        `on/off per round ${roundRatios.map((x) => x.toFixed(2)).join(', ')}: median ${result.resolverOnToOff.toFixed(2)}x (${result.resolverRatioMin.toFixed(2)}-${result.resolverRatioMax.toFixed(2)}); ` +
        `target <= 1.1x: ${met(result.resolverOnToOff <= 1.1)}; API CPU per scan (median of the rounds) on ${result.apiCpuUsPerScanOn.toFixed(0)} µs, ` +
        `off ${result.apiCpuUsPerScanOff.toFixed(0)} µs (${(result.apiCpuUsPerScanOn / result.apiCpuUsPerScanOff).toFixed(2)}x)` +
        (loadErrors.on + loadErrors.off > 0 ? ` (requests not completed: on ${loadErrors.on}, off ${loadErrors.off})` : ''),
    );
  }
  if (process.env['BENCH_JSON']) writeFileSync(process.env['BENCH_JSON'], JSON.stringify(result));
} finally {
  await seeded.drop();
}
