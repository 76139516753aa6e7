// `npm run soak`: a mixed-load soak of the production processes, as a check with an exit code.
// Starts the API and the executor as an operator runs them (`node services/<name>/src/main.ts`,
// child processes) on a fresh database and JetStream stream (real PostgreSQL and NATS, loopback),
// then, after SOAK_WARMUP_SECONDS (default 30) of the same load, for SOAK_SECONDS (default 60) drives at once:
//   - submits: one SubmitMintRequest of 50-500 serial units every 500 ms (a new idempotency key each),
//   - reads: two loops of ListMintBatches, GetMintKpis and ListMintUnits (random batch or all),
//   - resolves: two loops of GET on the resolver URLs of units the reads returned (no redirect followed),
// while sampling the resident set (VmRSS) of both children every second. Checks, each printed:
//   1. no request failed: every answer 2xx or 3xx (a resolver 409, "not activated yet", would be
//      expected and is counted apart; none occurs here since units are active at mint), no transport error;
//   2. memory stays flat, per process: the median RSS of the last third of the measured load
//      (seconds 40-60 of 60) is at most SOAK_RSS_GROWTH (default 1.20, i.e. +20%) times the median of
//      the warm window (seconds 10-30 of 60: from a sixth to a half of it). The warm-up comes first
//      because the API's RSS climbs for its first ~40 s under this load (V8 and native pools sizing
//      up; its V8 heap in use stays flat) and then holds: measured 166 -> 362 MB by 50 s, then
//      362-364 MB up to 150 s. Without the warm-up (SOAK_WARMUP_SECONDS=0) a 60-second run flags
//      that climb (+26%); failures and completions count over warm-up and measured load alike;
//   3. every submitted job COMPLETED within SOAK_DRAIN_SECONDS (default 90) after the load, with
//      exactly the units it asked for and no duplicate serial.
// The API runs with V8's defaults, as the chart leaves it (SOAK_API_NODE_OPTIONS sets its NODE_OPTIONS);
// the executor with the image's NODE_OPTIONS (deploy/bin/mint). Exits 0 when all hold, 1 otherwise; the children are stopped and the database and stream dropped either way.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { query } from '../test/support/sql.ts';
import { seedDemo } from '@mint/usecases';
import { executorNodeFlags, executorNodeOptions, withExecutorEnv } from './child-server.ts';
import { createStack, rssOf, type Service } from './services.ts';

const seconds = Number(process.env['SOAK_SECONDS'] ?? 60);
const warmupSeconds = Number(process.env['SOAK_WARMUP_SECONDS'] ?? 30);
const drainSeconds = Number(process.env['SOAK_DRAIN_SECONDS'] ?? 90);
const growthLimit = Number(process.env['SOAK_RSS_GROWTH'] ?? 1.2);
if (!(seconds >= 12) || !(warmupSeconds >= 0) || !(drainSeconds > 0) || !(growthLimit >= 1)) {
  throw new Error('SOAK_SECONDS must be at least 12, SOAK_WARMUP_SECONDS at least 0, SOAK_DRAIN_SECONDS positive and SOAK_RSS_GROWTH at least 1');
}

/** Requests of one kind: answers by status, transport errors and latencies (ms). */
interface Tally {
  sent: number;
  statuses: Record<string, number>;
  errors: number;
  latencies: number[];
  failures: string[];
}
const tallies = new Map<string, Tally>();
function tally(kind: string): Tally {
  let t = tallies.get(kind);
  if (t === undefined) {
    t = { sent: 0, statuses: {}, errors: 0, latencies: [], failures: [] };
    tallies.set(kind, t);
  }
  return t;
}

/** Statuses that count as a failure: anything outside 2xx/3xx, except a resolver's 409 (not activated yet). */
const isFailure = (kind: string, status: number) => !(status >= 200 && status < 400) && !(kind === 'resolve' && status === 409);

/** One request, tallied under `kind`; the parsed JSON body for a 200 (null otherwise). */
async function call(kind: string, url: string, init: RequestInit): Promise<unknown> {
  const t = tally(kind);
  t.sent++;
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    t.latencies.push(performance.now() - started);
    t.statuses[res.status] = (t.statuses[res.status] ?? 0) + 1;
    if (isFailure(kind, res.status)) {
      if (t.failures.length < 5) t.failures.push(`${res.status} ${init.method ?? 'GET'} ${url}: ${text.slice(0, 200)}`);
      return null;
    }
    return res.status === 200 && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : null;
  } catch (error) {
    t.errors++;
    if (t.failures.length < 5) t.failures.push(`${init.method ?? 'GET'} ${url}: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

const median = (values: readonly number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const percentile = (values: readonly number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};

const started = performance.now();
const elapsed = () => `[${String(Math.round((performance.now() - started) / 1000)).padStart(3)} s]`;
const problems: string[] = [];
const stack = await createStack('soak');
let api: Service | undefined;
let executor: Service | undefined;
try {
  const seed = await seedDemo(stack.ctx);
  api = await stack.start('api', process.env['SOAK_API_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['SOAK_API_NODE_OPTIONS'] } : {});
  // The executor as the image starts it (deploy/bin/mint's node flags, NODE_OPTIONS and environment); the API with V8's defaults, as the chart leaves it.
  executor = await stack.start('executor', withExecutorEnv({ NODE_OPTIONS: executorNodeOptions }), executorNodeFlags);
  console.log(
    `${elapsed()} soak: database ${stack.dbName}, stream ${stack.stream}, API pid ${api.child.pid} on ${api.port}, executor pid ${executor.child.pid}; ` +
      `${warmupSeconds} s of warm-up, then ${seconds} s of measured load`,
  );
  const base = `http://127.0.0.1:${api.port}`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${seed.access_token}` };
  const rpc = (kind: string, method: string, body: object) =>
    call(kind, `${base}/mint.v1.MintService/${method}`, { method: 'POST', headers, body: JSON.stringify(body) });

  const jobs: { jobId: string; batchId: string; quantity: number }[] = [];
  const batchIds: string[] = [];
  const resolverUrls: string[] = [];
  const samples: { at: number; api: number; executor: number }[] = [];
  // Diagnostic, not a check: the API's V8 heap (from its /metrics) every 5 s, to tell a growing
  // heap (objects kept) from a heap that only reserves more room.
  const heap: { at: number; usedMb: number; totalMb: number; externalMb: number }[] = [];
  const scrapeHeap = async (at: number) => {
    const text = await fetch(`${base}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const value = (name: string) => Number(new RegExp(`^minting_nodejs_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / 1024 / 1024;
    heap.push({ at, usedMb: value('heap_size_used_bytes'), totalMb: value('heap_size_total_bytes'), externalMb: value('external_memory_bytes') });
  };
  const loadStart = performance.now();
  const deadline = loadStart + (warmupSeconds + seconds) * 1000;
  /** Seconds into the measured load (negative during the warm-up). */
  const measuredAt = () => (performance.now() - loadStart) / 1000 - warmupSeconds;
  const running = () => performance.now() < deadline;

  const sampler = (async () => {
    for (let second = 0; running(); second++) {
      const a = rssOf(api!.child.pid!);
      const e = rssOf(executor!.child.pid!);
      if (a === null || e === null) {
        problems.push(`${a === null ? 'the API' : 'the executor'} exited during the soak`);
        return;
      }
      samples.push({ at: measuredAt(), api: a.rssMb, executor: e.rssMb });
      if (second % 5 === 0) void scrapeHeap(measuredAt());
      if (second % 10 === 0) {
        const done = [...tallies.values()].reduce((n, t) => n + t.sent, 0);
        const phase = second < warmupSeconds ? `warm-up ${second} s` : `measured ${second - warmupSeconds} s`;
        console.log(
          `${elapsed()} ${phase}: ${done} requests, ${jobs.length} jobs submitted, RSS API ${a.rssMb.toFixed(0)} MB, executor ${e.rssMb.toFixed(0)} MB`,
        );
      }
      await sleep(loadStart + (second + 1) * 1000 - performance.now());
    }
  })();

  const submits = (async () => {
    for (let _n = 0; running(); _n++) {
      const next = performance.now() + 500;
      const quantity = 50 + Math.floor(Math.random() * 451);
      const answer = (await rpc('submit', 'SubmitMintRequest', {
        brand_id: seed.brand_id,
        product_id: seed.product_id,
        requested_quantity: quantity,
        identity_mode: 'IDENTITY_MODE_SERIAL',
        activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
        idempotency_key: randomUUID(),
      })) as { ok?: boolean; mint_job_id?: string; mint_batch_id?: string } | null;
      if (answer?.ok && answer.mint_job_id && answer.mint_batch_id) {
        jobs.push({ jobId: answer.mint_job_id, batchId: answer.mint_batch_id, quantity });
        batchIds.push(answer.mint_batch_id);
      } else if (answer !== null) {
        problems.push(`a submit was blocked: ${JSON.stringify(answer).slice(0, 300)}`);
      }
      await sleep(Math.max(0, next - performance.now()));
    }
  })();

  const reads = async () => {
    while (running()) {
      await rpc('ListMintBatches', 'ListMintBatches', { brand_id: seed.brand_id, limit: 20 });
      await rpc('GetMintKpis', 'GetMintKpis', { brand_id: seed.brand_id });
      const batch = batchIds.length > 0 && Math.random() < 0.5 ? batchIds[Math.floor(Math.random() * batchIds.length)] : undefined;
      const page = (await rpc('ListMintUnits', 'ListMintUnits', { brand_id: seed.brand_id, limit: 100, ...(batch ? { mint_batch_id: batch } : {}) })) as {
        units?: { resolver_url?: string }[];
      } | null;
      for (const unit of page?.units ?? []) {
        if (!unit.resolver_url) continue;
        if (resolverUrls.length < 20_000) resolverUrls.push(unit.resolver_url);
        else resolverUrls[Math.floor(Math.random() * resolverUrls.length)] = unit.resolver_url;
      }
      await sleep(20);
    }
  };

  const resolves = async () => {
    while (running()) {
      if (resolverUrls.length === 0) {
        await sleep(100);
        continue;
      }
      const url = resolverUrls[Math.floor(Math.random() * resolverUrls.length)]!;
      if (!url.startsWith(base)) {
        problems.push(`a resolver URL outside the API under test: ${url}`);
        return;
      }
      await call('resolve', url, { method: 'GET', headers: { accept: 'text/html' } });
      await sleep(5);
    }
  };

  await Promise.all([sampler, submits, reads(), reads(), resolves(), resolves()]);
  console.log(`${elapsed()} load over: ${jobs.length} jobs submitted; waiting up to ${drainSeconds} s for them to complete`);

  // Check 3: every job COMPLETED with its units.
  const em = () => stack.db.em.fork();
  const drainDeadline = performance.now() + drainSeconds * 1000;
  let statuses: Record<string, number> = {};
  for (;;) {
    const rows = await query<{ status: string; n: string }>(em(), 'select status, count(*) as n from mint_jobs group by status');
    statuses = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    const done = (statuses['COMPLETED'] ?? 0) + (statuses['FAILED'] ?? 0);
    if (done >= jobs.length || performance.now() > drainDeadline) break;
    await sleep(500);
  }
  const drained = ((performance.now() - drainDeadline) / 1000 + drainSeconds).toFixed(1);
  const [units] = await query<{ n: string; serials: string }>(em(), 'select count(*) as n, count(distinct serial) as serials from mint_units');
  const wrongBatches = await query<{ id: string; requested_quantity: number; n: string }>(
    em(),
    `select b.id, b.requested_quantity, count(u.seq) as n from mint_batches b left join mint_units u on u.brand_id = b.brand_id and u.mint_batch_id = b.id
     group by b.id, b.requested_quantity having count(u.id) <> b.requested_quantity`,
  );
  const expectedUnits = jobs.reduce((n, j) => n + j.quantity, 0);
  const completed = statuses['COMPLETED'] ?? 0;
  if (completed !== jobs.length || Object.keys(statuses).some((s) => s !== 'COMPLETED')) {
    problems.push(`jobs: ${jobs.length} submitted, statuses ${JSON.stringify(statuses)} after ${drained} s of drain`);
  }
  if (Number(units!.n) !== expectedUnits) problems.push(`units: ${units!.n} minted, ${expectedUnits} requested`);
  if (Number(units!.serials) !== Number(units!.n)) problems.push(`serials: ${Number(units!.n) - Number(units!.serials)} duplicates`);
  if (wrongBatches.length > 0)
    problems.push(`${wrongBatches.length} batches hold a different number of units than requested, e.g. ${JSON.stringify(wrongBatches[0])}`);

  // Check 1: no failed request.
  console.log(`\nrequests over ${warmupSeconds} s of warm-up and ${seconds} s of measured load (latency in ms):`);
  console.log(`${'kind'.padEnd(16)} ${'sent'.padStart(7)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)}  statuses`);
  for (const [kind, t] of tallies) {
    console.log(
      `${kind.padEnd(16)} ${String(t.sent).padStart(7)} ${percentile(t.latencies, 50).toFixed(1).padStart(7)} ${percentile(t.latencies, 99).toFixed(1).padStart(7)} ` +
        `${Math.max(...t.latencies)
          .toFixed(1)
          .padStart(7)}  ${JSON.stringify(t.statuses)}${t.errors ? ` transport errors ${t.errors}` : ''}`,
    );
    const failed =
      Object.entries(t.statuses)
        .filter(([s]) => isFailure(kind, Number(s)))
        .reduce((n, [, c]) => n + c, 0) + t.errors;
    if (failed > 0) problems.push(`${kind}: ${failed} failed requests, e.g. ${t.failures.join(' | ')}`);
  }
  for (const kind of ['submit', 'ListMintBatches', 'GetMintKpis', 'ListMintUnits', 'resolve']) {
    if ((tallies.get(kind)?.sent ?? 0) === 0) problems.push(`${kind}: no request was sent`);
  }

  // Check 2: memory stays flat.
  const warm = samples.filter((s) => s.at >= seconds / 6 && s.at < seconds / 2);
  const last = samples.filter((s) => s.at >= seconds - seconds / 3);
  console.log(
    `\nRSS (MB), sampled every second: warm window = seconds ${(seconds / 6).toFixed(0)}-${(seconds / 2).toFixed(0)}, ` +
      `last window = seconds ${(seconds - seconds / 3).toFixed(0)}-${seconds} of the measured load; limit: last median <= ${growthLimit.toFixed(2)} x warm median`,
  );
  for (const name of ['api', 'executor'] as const) {
    const w = median(warm.map((s) => s[name]));
    const l = median(last.map((s) => s[name]));
    const all = samples.map((s) => s[name]);
    const ok = l <= growthLimit * w;
    console.log(
      `${name.padEnd(9)} at start of warm-up ${all[0]?.toFixed(0)}  warm median ${w.toFixed(0)}  last median ${l.toFixed(0)}  max ${Math.max(...all).toFixed(0)}  ` +
        `growth ${((l / w - 1) * 100).toFixed(1)}%  ${ok ? 'flat' : 'GREW'}`,
    );
    if (!ok || Number.isNaN(w) || Number.isNaN(l))
      problems.push(`${name} RSS grew from a warm median of ${w.toFixed(0)} MB to a last median of ${l.toFixed(0)} MB`);
  }
  const heapIn = (from: number, to: number, field: 'usedMb' | 'totalMb' | 'externalMb') =>
    median(heap.filter((h) => h.at >= from && h.at < to).map((h) => h[field]));
  console.log(
    `api V8 heap (diagnostic, every 5 s from /metrics): used ${heapIn(seconds / 6, seconds / 2, 'usedMb').toFixed(0)} MB warm, ` +
      `${heapIn(seconds - seconds / 3, seconds + 1, 'usedMb').toFixed(0)} MB last; total (reserved) ${heapIn(seconds / 6, seconds / 2, 'totalMb').toFixed(0)} MB warm, ` +
      `${heapIn(seconds - seconds / 3, seconds + 1, 'totalMb').toFixed(0)} MB last; external ${heapIn(seconds / 6, seconds / 2, 'externalMb').toFixed(0)} MB warm, ` +
      `${heapIn(seconds - seconds / 3, seconds + 1, 'externalMb').toFixed(0)} MB last; used samples ${heap.map((h) => h.usedMb.toFixed(0)).join(' ')}`,
  );
  console.log(
    `\njobs: ${jobs.length} submitted, ${completed} COMPLETED (${drained} s after the load), statuses ${JSON.stringify(statuses)}; ` +
      `units ${Number(units!.n).toLocaleString('en')} minted of ${expectedUnits.toLocaleString('en')} requested, ${Number(units!.serials).toLocaleString('en')} distinct serials`,
  );
} catch (error) {
  problems.push(`the soak stopped: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  if (problems.length > 0) {
    for (const service of [api, executor]) {
      if (service === undefined) continue;
      const log = (() => {
        try {
          return readFileSync(service.logFile, 'utf8');
        } catch {
          return '';
        }
      })();
      if (log.trim()) console.log(`\nlast lines of the ${service.name} log:\n${log.split('\n').slice(-15).join('\n')}`);
    }
  }
  await stack.close();
}
if (problems.length > 0) {
  console.log(`\nsoak FAILED (${problems.length}):`);
  for (const p of problems) console.log(`  - ${p}`);
  process.exitCode = 1;
} else {
  console.log(`\nsoak passed: no failed request, RSS flat, every job COMPLETED (${elapsed()} in all)`);
}
