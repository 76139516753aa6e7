// The lifecycle scenario (mint, allocate to a partner, encode, scrap, commission, pack into cases
// and pallets, return, decommission a pallet as stolen) with the API and the executor as child
// processes, run twice in one database: once undisturbed, once with the executor SIGKILLed (and
// restarted) at random points of the bulk moves it runs and the API SIGKILLed (and restarted) while
// EPCIS capture documents are in flight. Both runs must end exactly as an oracle computed from the
// inputs says (every serial's state, reason, partner and case; every container's state and pallet),
// and alike: the same EPCIS events (as a multiset, EPCs named by their place in the scenario), each
// EPC once per kind of event, every event valid against the EPCIS 2.0 JSON Schema and none
// aggregating an EPC before its commissioning, the audit counts and the KPIs exact.
//
// The partner A encodes and returns by seq range (MoveSerials of a batch range: the API runs the
// first chunk, the executor the rest, in chunks of SERIAL_MOVE_CHUNK_SIZE), scraps by list, and its
// packaging line reports commissioning and packing as EPCIS 2.0 documents POSTed to /epcis/capture
// (one per ten cases: a commissioning ObjectEvent and ten packing AggregationEvents; then one per
// pallet), two in flight at a time. A client whose request dies with the API sends the same
// document again (its eventIDs are its idempotency keys) until it is answered. One more kill comes
// after a document committed and before its answer reached the client (a proxy holds it): sent
// again, it must be answered as captured before.
//
// Sizes: FAULT_LIFECYCLE_UNITS units (default 4,000: 2,000 commissioned in 200 cases and 4
// pallets), FAULT_TRIALS executor kills and as many API kills (default 4).

import { randomUUID } from 'node:crypto';
import { createServer, connect as netConnect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { DecommissionReason, MintService, PartnerService, SerialAction } from '@mint/contract';
import { createApiKey, epcisDocument, getMintKpis, reconcileMintBatch } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnExecutor, type ExecutorProcess } from '../../services/executor/test/executor-process.ts';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { epcisValidator, mintCompleted } from '../support/pack-fixtures.ts';
import { freePort } from '../support/ports.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import {
  executorEnv,
  faultTrials,
  killAllApis,
  randomInt,
  report,
  scenarioTimeoutMs,
  spawnApi,
  sql,
  stopPgBouncer,
  waitFor,
  type ApiProcess,
  type ApiSettings,
} from './support.ts';

const n = Number(process.env['FAULT_LIFECYCLE_UNITS'] ?? 4_000);
const perCase = 10;
const casesPerPallet = 50;
const perPallet = perCase * casesPerPallet;
const allocatedCount = Math.round(n * 0.6);
const encodedCount = Math.round(n * 0.55);
const scrappedCount = Math.round(n * 0.002);
const commissionedCount = Math.floor(Math.round(n * 0.54) / perPallet) * perPallet;
const caseCount = commissionedCount / perCase;
const palletCount = caseCount / casesPerPallet;
const returnedCount = allocatedCount - encodedCount;
/** Units per chunk of a bulk move: about 25 chunks for the encoding. */
const moveChunk = Math.max(50, Math.min(10_000, Math.round(encodedCount / 25)));
/** Cases one capture document commissions and packs. */
const casesPerDocument = 10;
/** Capture documents in flight at once. */
const capturesInFlight = 2;

let app: UseCaseBundle;
let settings: ApiSettings;
let env: Record<string, string>;
let api: ApiProcess | undefined;
let executor: ExecutorProcess | undefined;
let mint: Client<typeof MintService>;
let partners: Client<typeof PartnerService>;

beforeAll(async () => {
  app = await setupUseCases();
  const streams = freshStreamNames();
  settings = {
    databaseUrl: app.database.url,
    natsUrl: testInfra().natsUrl,
    ...streams,
    port: await freePort(),
    env: { SERIAL_MOVE_CHUNK_SIZE: String(moveChunk), RATE_LIMIT_PER_CREDENTIAL: '0' },
  };
  env = executorEnv({ databaseUrl: app.database.url, natsUrl: testInfra().natsUrl, ...streams }, { SERIAL_MOVE_CHUNK_SIZE: String(moveChunk) });
  const transport = createConnectTransport({ baseUrl: `http://127.0.0.1:${settings.port}`, httpVersion: '1.1' });
  mint = createClient(MintService, transport);
  partners = createClient(PartnerService, transport);
});

afterAll(async () => {
  executor?.signal('SIGKILL');
  await executor?.exited;
  await killAllApis();
  await stopPgBouncer();
  await app?.close();
});

/** A run's brand: its batch, serials by seq, and the credentials of its partner A and packaging line. */
interface Run {
  readonly label: string;
  readonly brand: SeededBrand;
  readonly batch: string;
  /** Serials in seq order (index = seq - 1). */
  readonly serials: readonly string[];
  /** Unit EPCs in seq order. */
  readonly epcs: readonly string[];
}

/** What a run counted of its faults. */
interface Faults {
  executorKills: number;
  apiKills: number;
  /** Capture requests that died in flight with the API (sent again). */
  interrupted: number;
  /** Documents whose answer said they had been captured before (the first answer was lost). */
  replayedDocuments: number;
}

const asBrand = (brand: SeededBrand) => ({ headers: { authorization: `Bearer ${brand.token}` } });
const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

async function prepare(label: string): Promise<Run> {
  const brand = await app.seedBrand();
  const { mintBatchId: batch } = await mintCompleted(app.ctx, brand, n, { activationMode: 'first_scan' });
  const units = await sql<{ serial: string; epc: string }>(
    app.database.url,
    `
    select u.serial, regexp_replace(b.resolver_base_url, '/$', '') || '/01/' || b.gtin || '/21/' || u.serial as epc
    from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = $1 order by u.seq`,
    [batch],
  );
  expect(units).toHaveLength(n);
  return { label, brand, batch, serials: units.map((u) => u.serial), epcs: units.map((u) => u.epc) };
}

/** Starts the API (on the file's port) and remembers it; a start slower than spawnApi allows (a busy host) is tried again. */
async function startApi(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      api = await spawnApi(settings);
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

async function restartExecutor(): Promise<void> {
  executor?.signal('SIGKILL');
  await executor?.exited;
  executor = await spawnExecutor(env);
}

/** A partner's bulk move of seqs [from, to]; kills the executor when its progress passes each of `killsAt` (units moved). */
async function bulkMove(
  run: Run,
  key: string,
  action: SerialAction,
  from: number,
  to: number,
  idempotencyKey: string,
  killsAt: readonly number[],
  faults: Faults,
): Promise<void> {
  const started = await mint.moveSerials(
    {
      brandId: run.brand.brandId,
      action,
      target: { case: 'range', value: { mintBatchId: run.batch, fromSeq: from, toSeq: to } },
      idempotencyKey,
    },
    withKey(key),
  );
  expect(started.move?.status).toBe('running');
  const moveId = started.move!.moveId;
  const progress = async () =>
    (await sql<{ moved: number; status: string }>(settings.databaseUrl, 'select moved, status from serial_moves where id = $1', [moveId]))[0]!;
  for (const point of killsAt) {
    await waitFor(`${point} units moved`, async () => (await progress()).moved >= point, 120_000, 10);
    await sleep(randomInt(0, 60));
    await restartExecutor();
    faults.executorKills++;
  }
  await waitFor(`${run.label}: the ${SerialAction[action]} move done`, async () => (await progress()).status === 'done', 180_000, 50);
  const done = await mint.getSerialMove({ brandId: run.brand.brandId, moveId }, withKey(key));
  expect(done.move).toMatchObject({ status: 'done', total: to - from + 1, moved: to - from + 1, refused: 0 });
}

/** POSTs a capture document until the API answers it; a request that dies with the API is sent again, unchanged. */
async function capture(run: Run, lineKey: string, document: Record<string, unknown>, faults: Faults): Promise<{ captured: number; replayed: number }> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    let res: Response;
    try {
      res = await fetch(`http://127.0.0.1:${settings.port}/epcis/capture`, {
        method: 'POST',
        headers: { 'content-type': 'application/ld+json', 'x-api-key': lineKey, 'x-workspace-id': run.brand.brandId },
        body: JSON.stringify(document),
      });
    } catch (error) {
      // Refused: the API is down, the document never reached it. Anything else: it died in flight.
      if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED') faults.interrupted++;
      if (Date.now() > deadline) throw new Error(`${run.label}: capture not answered within 300 s`);
      await sleep(100);
      continue;
    }
    const body = (await res.json()) as { captured: number; replayed: number };
    if (res.status === 200) return body;
    // The API starting up (not ready) or stopping: send it again.
    if (res.status === 503 && Date.now() < deadline) {
      await sleep(100);
      continue;
    }
    throw new Error(`${run.label}: capture answered ${res.status} ${JSON.stringify(body)}`);
  }
}

const documentOf = (eventList: unknown[]) => ({
  '@context': ['https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld'],
  type: 'EPCISDocument',
  schemaVersion: '2.0',
  creationDate: new Date().toISOString(),
  epcisBody: { eventList },
});

/** A TCP proxy to `port` that forwards requests and drops every answer. */
async function silentProxy(port: number): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = netConnect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  const proxyPort = await freePort();
  await new Promise<void>((resolve) => server.listen(proxyPort, '127.0.0.1', resolve));
  return {
    port: proxyPort,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** Runs the scenario for `run`; with `kills`, SIGKILLs the executor and the API as the file's header says. */
async function scenario(run: Run, prefix: string, kills: boolean): Promise<{ faults: Faults; cases: string[]; pallets: string[] }> {
  const faults: Faults = { executorKills: 0, apiKills: 0, interrupted: 0, replayedDocuments: 0 };
  const { brand } = run;
  await mint.setContainerSettings({ brandId: brand.brandId, gs1CompanyPrefix: prefix, maxDepth: 2 }, asBrand(brand));
  const { partnerId } = await partners.createPartner({ brandId: brand.brandId, name: 'Contract manufacturer A' }, asBrand(brand));
  const keyA = (
    await partners.grantPartnerKey(
      {
        brandId: brand.brandId,
        partnerId,
        name: 'A key',
        restriction: { case: 'mintBatchId', value: run.batch },
        quota: allocatedCount,
      },
      asBrand(brand),
    )
  ).apiKey;
  const lineKey = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'packaging line', scopes: ['mint:write', 'mint:read'] })).key;

  // A's allocation is the lowest seqs: 1..allocatedCount.
  const allocated = await partners.allocateSerials({ brandId: brand.brandId, quantity: allocatedCount, idempotencyKey: 'a' }, withKey(keyA));
  expect(allocated.serials.map((s) => s.serial)).toEqual(run.serials.slice(0, allocatedCount));

  // The executor is killed at random points of the bulk moves: the encoding and the return.
  const points = Array.from({ length: kills ? faultTrials : 0 }, () =>
    Math.floor(moveChunk + Math.random() * (encodedCount + returnedCount - 2 * moveChunk)),
  ).sort((a, b) => a - b);
  await bulkMove(
    run,
    keyA,
    SerialAction.ENCODE,
    1,
    encodedCount,
    'encode',
    points.filter((p) => p < encodedCount),
    faults,
  );
  const scrapped = run.serials.slice(0, scrappedCount);
  const scrap = await mint.moveSerials(
    { brandId: brand.brandId, action: SerialAction.SCRAP, target: { case: 'serials', value: { serials: scrapped } }, idempotencyKey: 'scrap' },
    withKey(keyA),
  );
  expect(scrap.move).toMatchObject({ status: 'done', moved: scrappedCount, refused: 0 });

  // A mints its cases and pallets; its packaging line reports commissioning and packing by capture.
  const cases = (
    await mint.mintContainers({ brandId: brand.brandId, level: 'case', count: caseCount, extensionDigit: 3, idempotencyKey: 'cases' }, withKey(keyA))
  ).ssccs;
  const pallets = (
    await mint.mintContainers({ brandId: brand.brandId, level: 'pallet', count: palletCount, extensionDigit: 3, idempotencyKey: 'pallets' }, withKey(keyA))
  ).ssccs;
  const base = run.epcs[0]!.replace(/\/01\/.*$/, '');
  const caseEpc = (c: number) => `${base}/00/${cases[c]!}`;
  const commissionedEpcs = run.epcs.slice(scrappedCount, scrappedCount + commissionedCount);
  // The line reports after the containers were minted (their commissioning), one millisecond per event.
  let clock = Date.now();
  const at = () => new Date(clock++).toISOString();
  const event = (fields: Record<string, unknown>) => ({ eventID: `urn:uuid:${randomUUID()}`, eventTime: at(), eventTimeZoneOffset: '+00:00', ...fields });
  const documents: { document: Record<string, unknown>; events: number }[] = [];
  for (let first = 0; first < caseCount; first += casesPerDocument) {
    const group = Array.from({ length: Math.min(casesPerDocument, caseCount - first) }, (_, i) => first + i);
    const events = [
      event({
        type: 'ObjectEvent',
        action: 'OBSERVE',
        bizStep: 'commissioning',
        disposition: 'active',
        epcList: commissionedEpcs.slice(first * perCase, (group.at(-1)! + 1) * perCase),
      }),
      ...group.map((c) =>
        event({
          type: 'AggregationEvent',
          action: 'ADD',
          bizStep: 'packing',
          parentID: caseEpc(c),
          childEPCs: commissionedEpcs.slice(c * perCase, (c + 1) * perCase),
        }),
      ),
    ];
    documents.push({ document: documentOf(events), events: events.length });
  }
  const palletDocuments = pallets.map((sscc, p) => {
    const events = [
      event({
        type: 'AggregationEvent',
        action: 'ADD',
        bizStep: 'packing',
        parentID: `${base}/00/${sscc}`,
        childEPCs: Array.from({ length: casesPerPallet }, (_, i) => caseEpc(p * casesPerPallet + i)),
      }),
    ];
    return { document: documentOf(events), events: events.length };
  });

  // Two documents in flight at a time; with kills, the API dies at random points of the packing.
  const packed = async () =>
    Number(
      (
        await sql<{ n: string }>(settings.databaseUrl, `select count(*) as n from epcis_events where brand_id = $1 and biz_step = 'packing'`, [brand.brandId])
      )[0]!.n,
    );
  let inFlight = 0;
  const send = async (list: typeof documents) => {
    const queue = [...list];
    await Promise.all(
      Array.from({ length: capturesInFlight }, async () => {
        for (let d = queue.shift(); d !== undefined; d = queue.shift()) {
          inFlight++;
          const answer = await capture(run, lineKey, d.document, faults).finally(() => inFlight--);
          expect(answer.captured + answer.replayed).toBe(d.events);
          expect([0, d.events]).toContain(answer.captured);
          if (answer.replayed > 0) faults.replayedDocuments++;
        }
      }),
    );
  };
  if (kills) {
    // One document's answer is lost: it reaches the API through a proxy that never answers, and
    // the API dies once the document committed. Sent again below, it must be answered as captured
    // before, and change nothing.
    const lost = documents[0]!.document;
    const ids = (lost['epcisBody'] as { eventList: { eventID: string }[] }).eventList.map((e) => e.eventID.slice('urn:uuid:'.length));
    const proxy = await silentProxy(settings.port!);
    const sent = fetch(`http://127.0.0.1:${proxy.port}/epcis/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/ld+json', 'x-api-key': lineKey, 'x-workspace-id': brand.brandId },
      body: JSON.stringify(lost),
    }).then(
      () => 'answered',
      () => 'lost',
    );
    await waitFor(
      'the proxied document committed',
      async () =>
        Number(
          (
            await sql<{ n: string }>(settings.databaseUrl, 'select count(*) as n from epcis_events where brand_id = $1 and id = any($2::uuid[])', [
              brand.brandId,
              ids,
            ])
          )[0]!.n,
        ) === ids.length,
      60_000,
      10,
    );
    await api!.kill();
    faults.apiKills++;
    proxy.close();
    expect(await sent).toBe('lost');
    faults.interrupted++;
    await startApi();
  }
  const killer = (async () => {
    if (!kills) return;
    const total = caseCount + palletCount;
    const apiPoints = Array.from({ length: faultTrials }, () => Math.floor(total * (0.05 + Math.random() * 0.85))).sort((a, b) => a - b);
    for (const point of apiPoints) {
      await waitFor('packing events captured', async () => (await packed()) >= point && inFlight > 0, 120_000, 10);
      await sleep(randomInt(0, 150));
      await api!.kill();
      faults.apiKills++;
      await startApi();
    }
  })();
  await Promise.all([
    (async () => {
      await send(documents);
      await send(palletDocuments);
    })(),
    killer,
  ]);

  // A returns what it never encoded; the brand decommissions one pallet as stolen.
  await bulkMove(
    run,
    keyA,
    SerialAction.RETURN,
    encodedCount + 1,
    allocatedCount,
    'return',
    points.filter((p) => p >= encodedCount).map((p) => p - encodedCount),
    faults,
  );
  const stolen = await mint.moveSerials(
    {
      brandId: brand.brandId,
      action: SerialAction.DECOMMISSION,
      reason: DecommissionReason.STOLEN,
      target: { case: 'container', value: pallets[1]! },
      idempotencyKey: 'stolen',
    },
    asBrand(brand),
  );
  // A move on a container runs its first chunk in the request and the rest on the executor.
  const stolenId = stolen.move!.moveId;
  await waitFor(
    `${run.label}: the stolen pallet's move done`,
    async () => (await sql<{ status: string }>(settings.databaseUrl, 'select status from serial_moves where id = $1', [stolenId]))[0]!.status === 'done',
    180_000,
    50,
  );
  const stolenDone = await mint.getSerialMove({ brandId: brand.brandId, moveId: stolenId }, asBrand(brand));
  expect(stolenDone.move).toMatchObject({ status: 'done', total: perPallet, moved: perPallet, refused: 0 });
  return { faults, cases: [...cases], pallets: [...pallets] };
}

/** Every serial's state (with reason), partner and case, by seq; every container's state and parent, by its place. */
async function endState(run: Run, cases: readonly string[], pallets: readonly string[]): Promise<{ units: string[]; containers: string[] }> {
  const place = new Map<string, string>([...cases.map((s, i) => [s, `case${i}`] as const), ...pallets.map((s, i) => [s, `pallet${i}`] as const)]);
  const units = await sql<{ seq: number; state: string; partner: string | null; sscc: string | null }>(
    settings.databaseUrl,
    `
    select u.seq, coalesce(s.state || coalesce(':' || s.reason, ''), case when u.status = 'active' then 'commissioned' else 'issued' end) as state,
           p.name as partner, c.sscc
    from mint_units u
    left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
    left join unit_allocations a on a.brand_id = u.brand_id and a.mint_batch_id = u.mint_batch_id and a.seq = u.seq
    left join partners p on p.brand_id = a.brand_id and p.id = a.partner_id
    left join unit_containers uc on uc.brand_id = u.brand_id and uc.mint_batch_id = u.mint_batch_id and uc.seq = u.seq
    left join containers c on c.brand_id = uc.brand_id and c.id = uc.container_id
    where u.mint_batch_id = $1 order by u.seq`,
    [run.batch],
  );
  const containers = await sql<{ sscc: string; state: string; parent: string | null }>(
    settings.databaseUrl,
    `
    select c.sscc, c.state || coalesce(':' || c.reason, '') as state, p.sscc as parent
    from containers c left join containers p on p.brand_id = c.brand_id and p.id = c.parent_id where c.brand_id = $1`,
    [run.brand.brandId],
  );
  return {
    units: units.map((u) => `${u.seq} ${u.state} ${u.partner ?? '-'} ${u.sscc === null ? '-' : place.get(u.sscc)}`),
    containers: containers.map((c) => `${place.get(c.sscc)} ${c.state} ${c.parent === null ? '-' : place.get(c.parent)}`).sort(),
  };
}

/** The end state the inputs alone give. */
function oracle(): { units: string[]; containers: string[] } {
  const units = Array.from({ length: n }, (_, i) => {
    const seq = i + 1;
    const c = i - scrappedCount;
    const inCase = c >= 0 && c < commissionedCount ? `case${Math.floor(c / perCase)}` : '-';
    const stolen = c >= perPallet && c < 2 * perPallet;
    const state =
      seq <= scrappedCount
        ? 'scrapped'
        : inCase !== '-'
          ? stolen
            ? 'decommissioned:stolen'
            : 'commissioned'
          : seq <= encodedCount
            ? 'encoded'
            : seq <= allocatedCount
              ? 'returned'
              : 'issued';
    return `${seq} ${state} ${seq <= allocatedCount ? 'Contract manufacturer A' : '-'} ${inCase}`;
  });
  const containers = [
    ...Array.from(
      { length: caseCount },
      (_, i) => `case${i} ${Math.floor(i / casesPerPallet) === 1 ? 'decommissioned:stolen' : 'commissioned'} pallet${Math.floor(i / casesPerPallet)}`,
    ),
    ...Array.from({ length: palletCount }, (_, i) => `pallet${i} ${i === 1 ? 'decommissioned:stolen' : 'commissioned'} -`),
  ].sort();
  return { units, containers };
}

/** The run's EPCIS events, EPCs named by their place (u{seq}, case{i}, pallet{i}), in event time order. */
async function eventsOf(run: Run, cases: readonly string[], pallets: readonly string[]) {
  const place = new Map<string, string>([
    ...run.epcs.map((e, i) => [e, `u${i + 1}`] as const),
    ...cases.map((s, i) => [s, `case${i}`] as const),
    ...pallets.map((s, i) => [s, `pallet${i}`] as const),
  ]);
  const name = (epc: string) => place.get(epc) ?? place.get(/\/00\/(\d{18})$/.exec(epc)?.[1] ?? '') ?? `unknown:${epc}`;
  const rows = await sql<{ body: Record<string, unknown>; event_type: string; biz_step: string; disposition: string | null }>(
    settings.databaseUrl,
    'select body, event_type, biz_step, disposition from epcis_events where brand_id = $1 order by event_time, record_time, id',
    [run.brand.brandId],
  );
  return rows.map((r) => {
    const kind = `${r.event_type} ${String(r.body['action'])} ${r.biz_step} ${r.disposition ?? '-'}`;
    const parent = typeof r.body['parentID'] === 'string' ? name(r.body['parentID']) : null;
    const epcs = ((r.body['epcList'] ?? r.body['childEPCs'] ?? []) as string[]).map(name);
    return { kind, parent, epcs, body: r.body, signature: `${kind} ${parent ?? '-'} [${[...epcs].sort().join(' ')}]` };
  });
}

/** EPCs per kind of event, and the kinds naming an EPC more than once. */
function perKind(events: Awaited<ReturnType<typeof eventsOf>>): { counts: Record<string, number>; repeated: string[] } {
  const seen = new Map<string, Set<string>>();
  const repeated: string[] = [];
  for (const e of events) {
    const set = seen.get(e.kind) ?? new Set();
    for (const epc of [...(e.parent === null ? [] : [`parent:${e.parent}`]), ...e.epcs]) {
      if (set.has(epc)) repeated.push(`${e.kind} ${epc}`);
      set.add(epc);
    }
    seen.set(e.kind, set);
  }
  return { counts: Object.fromEntries([...seen].map(([k, s]) => [k, s.size]).sort()), repeated };
}

describe('fault: the lifecycle scenario with the executor and the API SIGKILLed', () => {
  it(
    `ends as its oracle and as an undisturbed run, at ${n} units, through ${faultTrials} executor and ${faultTrials + 1} API kills`,
    async () => {
      expect(palletCount).toBeGreaterThanOrEqual(2);
      const calm = await prepare('undisturbed');
      const faulted = await prepare('faulted');
      await startApi();
      executor = await spawnExecutor(env);

      const results = [];
      for (const [run, prefix, kills] of [
        [calm, '0614141', false],
        [faulted, '0614142', true],
      ] as const) {
        const started = Date.now();
        const { faults, cases, pallets } = await scenario(run, prefix, kills);
        const state = await endState(run, cases, pallets);
        const events = await eventsOf(run, cases, pallets);
        const audit = await sql<{ action: string; n: string }>(
          settings.databaseUrl,
          `
        select payload->>'action' as action, sum((payload->>'count')::int) as n from mint_events
        where brand_id = $1 and event_type = 'mint_units_moved' group by 1 order by 1`,
          [run.brand.brandId],
        );
        const kpis = await getMintKpis(app.ctx, run.brand.brandId);
        const reconciliation = await reconcileMintBatch(app.ctx, run.brand.brandId, run.batch);
        results.push({ run, faults, state, events, audit, kpis, reconciliation, seconds: (Date.now() - started) / 1000 });
      }
      const [a, b] = results as [(typeof results)[0], (typeof results)[0]];
      const expected = oracle();
      const kindsA = perKind(a.events);
      const kindsB = perKind(b.events);
      // Compared an EPC at a time (kind, parent, EPC): a chunked move groups its units into events
      // chunk by chunk, in the order of the containers' ids, which differ between the two runs.
      const entries = (events: typeof a.events) =>
        events.flatMap((e) => (e.epcs.length === 0 ? [e.signature] : e.epcs.map((epc) => `${e.kind} ${e.parent ?? '-'} ${epc}`))).sort();
      const signaturesA = entries(a.events);
      const signaturesB = entries(b.events);
      const onlyIn = (x: string[], y: string[]) => {
        const left = [...x];
        for (const s of y) {
          const i = left.indexOf(s);
          if (i !== -1) left.splice(i, 1);
        }
        return left;
      };
      report('lifecycle-kill', {
        units: n,
        chunk: moveChunk,
        executorKills: b.faults.executorKills,
        apiKills: b.faults.apiKills,
        interruptedCaptures: b.faults.interrupted,
        replayedDocuments: b.faults.replayedDocuments,
        events: b.events.length,
        lost: onlyIn(signaturesA, signaturesB).length,
        duplicated: onlyIn(signaturesB, signaturesA).length,
        repeatedEpcs: kindsB.repeated.length,
        unitsOff: b.state.units.filter((u, i) => u !== expected.units[i]).length,
        secondsUndisturbed: a.seconds.toFixed(1),
        secondsFaulted: b.seconds.toFixed(1),
      });
      expect(b.faults.executorKills).toBe(faultTrials);
      expect(b.faults.apiKills).toBe(faultTrials + 1);
      expect(b.faults.replayedDocuments).toBeGreaterThanOrEqual(1);

      for (const r of [a, b]) {
        // Every serial and container where the oracle says.
        expect(r.state.units.filter((u, i) => u !== expected.units[i]).slice(0, 10)).toEqual([]);
        expect(r.state.containers).toEqual(expected.containers);
        expect(r.kpis).toEqual({ totalTokensMinted: n, activeTokens: commissionedCount - perPallet, batchesCreated: 1, exportedPrinted: 0 });
        expect(r.reconciliation).toMatchObject({ requested: n, minted: n, balanced: true, problems: [] });
        // The audit trail counts every unit moved once per move.
        expect(Object.fromEntries(r.audit.map((x) => [x.action, Number(x.n)]))).toEqual({
          encode: encodedCount,
          scrap: scrappedCount,
          commission: commissionedCount,
          return: returnedCount,
          decommission: perPallet,
        });
      }
      // Each EPC once per kind of event, as many as the inputs give.
      expect(kindsA.repeated).toEqual([]);
      expect(kindsB.repeated).toEqual([]);
      expect(kindsB.counts).toEqual({
        'AggregationEvent ADD packing -': caseCount + palletCount + commissionedCount + caseCount,
        'ObjectEvent ADD commissioning active': caseCount + palletCount,
        'ObjectEvent ADD encoding encoded': encodedCount,
        'ObjectEvent ADD reserving reserved': allocatedCount,
        'ObjectEvent DELETE decommissioning returned': returnedCount,
        'ObjectEvent DELETE decommissioning stolen': perPallet + casesPerPallet + 1,
        'ObjectEvent DELETE destroying destroyed': scrappedCount,
        'ObjectEvent OBSERVE commissioning active': commissionedCount,
      });
      // The same events as the undisturbed run, none more, none fewer.
      expect(onlyIn(signaturesA, signaturesB)).toEqual([]);
      expect(onlyIn(signaturesB, signaturesA)).toEqual([]);

      // Every event validates, and none aggregates an EPC not commissioned before it.
      const validate = epcisValidator();
      for (const r of [a, b]) {
        expect(
          validate(
            epcisDocument(
              r.events.map((e) => e.body),
              new Date(),
            ),
          ),
          JSON.stringify(validate.errors?.slice(0, 3)),
        ).toBe(true);
        const commissioned = new Set<string>();
        const lacking: string[] = [];
        for (const e of r.events) {
          if (e.kind.includes(' commissioning ')) for (const epc of e.epcs) commissioned.add(epc);
          if (e.kind.startsWith('AggregationEvent')) lacking.push(...[e.parent!, ...e.epcs].filter((epc) => !commissioned.has(epc)));
        }
        expect(lacking).toEqual([]);
      }
    },
    scenarioTimeoutMs(240_000, 30_000),
  );
});
