// Fuzzes every RPC of MintService, CatalogService and WebhookService over a real server with a seeded brand's
// token: random field values in well-formed messages (binary and JSON), random bytes as the
// protobuf body, and random JSON. No answer may be Internal or Unknown, an InvalidArgument must
// name the problem, a refused call must write nothing, and the database invariants must hold.

import { create, toBinary, toJson, type DescMethod, type DescService, type Message } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { codeFromString } from '@connectrpc/connect/protocol-connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ActivationMode, CatalogService, IdentityMode, MintService, ProductionBatchStatus, WebhookService } from '@mint/contract';
import { claimPayloadPack, generatePayloadPack } from '@mint/usecases';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../support/usecases.ts';
import {
  anyJsonText,
  brokenInvariants,
  fuzzParameters,
  jsonObjectFor,
  jsonText,
  messageInit,
  remember,
  requestInit,
  rowCounts,
  startFuzzApi,
  type FuzzApi,
  type IdPool,
} from './support.ts';

const services: readonly DescService[] = [MintService, CatalogService, WebhookService];
const methods: readonly DescMethod[] = services.flatMap((s) => s.methods);
const methodCases = methods.map((m) => [`${m.parent.name}/${m.name}`, m] as const);

/** Codes that mean the server failed instead of refusing the input. */
const serverFaults: ReadonlySet<Code> = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

let app: UseCaseBundle;
let api: FuzzApi;
let binary: Transport;
let brand: SeededBrand;
let other: SeededBrand;
let pool: IdPool;
let checkedLogLines = 0;

/** What a call ended with. */
interface Outcome {
  readonly code: Code | 'ok';
  readonly message: string;
  readonly response?: Record<string, unknown>;
}

/** Calls `method` through the typed client (unary, or the first message of a stream, at most 2 s). */
async function call(method: DescMethod, message: Message): Promise<Outcome> {
  const client = createClient(method.parent, binary) as unknown as Record<string, (req: unknown, options: unknown) => unknown>;
  const signal = AbortSignal.timeout(2_000);
  try {
    const result = client[method.localName]!(message, { headers: { authorization: `Bearer ${brand.token}` }, signal });
    if (method.methodKind === 'server_streaming') {
      for await (const item of result as AsyncIterable<unknown>) return { code: 'ok', message: '', response: item as Record<string, unknown> };
      return { code: 'ok', message: '' };
    }
    return { code: 'ok', message: '', response: (await (result as Promise<unknown>)) as Record<string, unknown> };
  } catch (error) {
    const e = ConnectError.from(error);
    // The client's own deadline on a stream that is still running is not an answer of the server.
    if (signal.aborted && (e.code === Code.Canceled || e.code === Code.DeadlineExceeded)) return { code: 'ok', message: 'stream still running' };
    return { code: e.code, message: e.rawMessage };
  }
}

/** Posts a raw body to `method` with the Connect protocol (streams enveloped) and reads the outcome. */
async function post(
  method: DescMethod,
  body: Uint8Array,
  format: 'proto' | 'json',
  headers: Record<string, string> = {},
): Promise<Outcome & { status: number }> {
  const streaming = method.methodKind === 'server_streaming';
  const contentType = streaming ? `application/connect+${format}` : `application/${format}`;
  let payload = body;
  if (streaming) {
    payload = new Uint8Array(5 + body.byteLength);
    new DataView(payload.buffer).setUint32(1, body.byteLength);
    payload.set(body, 5);
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 2_000);
  try {
    const res = await fetch(`${api.baseUrl}/${method.parent.typeName}/${method.name}`, {
      method: 'POST',
      headers: { 'content-type': contentType, authorization: `Bearer ${brand.token}`, ...headers },
      body: payload,
      signal: controller.signal,
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (streaming && res.status === 200) return { status: res.status, ...endOfStream(bytes) };
    if (res.status === 200) return { status: 200, code: 'ok', message: '' };
    const text = new TextDecoder().decode(bytes);
    try {
      const error = JSON.parse(text) as { code?: string; message?: string };
      return { status: res.status, code: codeFromString(error.code ?? '') ?? Code.Unknown, message: error.message ?? '' };
    } catch {
      return { status: res.status, code: Code.Unknown, message: `non-JSON error body: ${text.slice(0, 200)}` };
    }
  } catch (error) {
    if (controller.signal.aborted) return { status: 200, code: 'ok', message: 'stream still running' };
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The outcome in a Connect stream's end-of-stream envelope (flag 2). */
function endOfStream(bytes: Uint8Array): Outcome {
  let at = 0;
  while (at + 5 <= bytes.byteLength) {
    const flags = bytes[at]!;
    const length = new DataView(bytes.buffer, bytes.byteOffset + at + 1, 4).getUint32(0);
    const data = bytes.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    if ((flags & 2) === 2) {
      const end = JSON.parse(new TextDecoder().decode(data)) as { error?: { code?: string; message?: string } };
      if (end.error === undefined) return { code: 'ok', message: '' };
      return { code: codeFromString(end.error.code ?? '') ?? Code.Unknown, message: end.error.message ?? '' };
    }
  }
  return { code: 'ok', message: '' };
}

/**
 * Undecodable bodies: @connectrpc/connect 2.2.0 maps a binary parse failure to Internal ("parse
 * binary: ...", protocol/serialization.js line 96) and a body that does not decompress under its
 * Content-Encoding to Internal "decompression failed" (protocol/compression.js), both before any
 * interceptor of ours runs.
 * The properties below collect these answers instead of stopping at the first one, so they keep
 * searching for other faults; the test at the end of the file fails while any was collected.
 */
const undecodableAnsweredInternal: string[] = [];

/** True for the library's answer to an undecodable protobuf body (see above). */
const isBinaryParseFault = (outcome: Outcome) => outcome.code === Code.Internal && libraryFaultMessage.test(outcome.message);

/** Messages of the library's Internal answers to undecodable bodies: protobuf that does not parse, or a body that does not decompress. */
const libraryFaultMessage = /^(parse binary:|decompression failed)/;

/** A field path at the start of a violation: `name`, `lots[2].qty`, `units.ids[0]`. */
const fieldPrefix = /^([a-z_][a-z0-9_]*)(\[[^\]]*\])?(\.[a-z_][a-z0-9_]*(\[[^\]]*\])?)*: \S/;

/**
 * The checks every answer gets: no server fault, and an InvalidArgument has a message. For a
 * message that decoded (`decoded`), the message starts with a field (or oneof) of the request,
 * `field: problem`, and every further `; `-separated part that starts like a field path names one
 * of the request's fields; the JSON decoder's "cannot decode field <type>.<field>" counts too.
 */
function expectClearAnswer(method: DescMethod, outcome: Outcome, decoded: boolean, input: unknown): void {
  const where = `${method.parent.name}/${method.name} answered ${outcome.code === 'ok' ? 'ok' : Code[outcome.code]} "${outcome.message.slice(0, 300)}" to ${describeInput(input)}`;
  if (isBinaryParseFault(outcome)) {
    undecodableAnsweredInternal.push(where);
    return;
  }
  if (outcome.code !== 'ok') expect(serverFaults.has(outcome.code), where).toBe(false);
  if (outcome.code !== Code.InvalidArgument) return;
  expect(outcome.message.trim(), where).not.toBe('');
  if (!decoded) return;
  const names = new Set([...method.input.fields.map((f) => f.name), ...method.input.oneofs.map((o) => o.name)]);
  // The JSON decoder names the field by its message type, which may be nested (mint.v1.Lot.lot_code).
  if (/^cannot decode field mint\.v1\.\w+\.\w+ from JSON: \S/.test(outcome.message)) return;
  expect(fieldPrefix.test(outcome.message), `${where}: does not start with a field of ${method.input.typeName}`).toBe(true);
  const first = fieldPrefix.exec(outcome.message)![1]!;
  expect(names.has(first), `${where}: "${first}" is no field of ${method.input.typeName}`).toBe(true);
}

/**
 * No 5xx except the ones Connect gives a client's own mistakes: 501 Unimplemented (a compression
 * the server does not support), 504 DeadlineExceeded (the client's timeout ran out) and 503
 * Unavailable. The library's binary parse fault is collected (see above).
 */
function expectNoServerStatus(method: DescMethod, outcome: Outcome & { status: number }, input: unknown): void {
  if (isBinaryParseFault(outcome)) return;
  const allowed = outcome.code === Code.Unimplemented || outcome.code === Code.DeadlineExceeded || outcome.code === Code.Unavailable;
  const where = `${method.parent.name}/${method.name}: HTTP ${outcome.status} ${outcome.code === 'ok' ? 'ok' : Code[outcome.code]} "${outcome.message.slice(0, 300)}" to ${describeInput(input)}`;
  if (!allowed) expect(outcome.status, where).toBeLessThan(500);
}

/** A short, printable description of a fuzzed input for failure messages. */
function describeInput(input: unknown): string {
  const text = input instanceof Uint8Array ? `bytes ${Buffer.from(input.subarray(0, 120)).toString('hex')} (${input.byteLength} bytes)` : jsonText(input);
  return text.length > 600 ? `${text.slice(0, 600)}... (${text.length} chars)` : text;
}

/** Remembers ids a successful call created, so later calls act on real rows. */
function harvest(response: Record<string, unknown> | undefined): void {
  if (response === undefined) return;
  remember(pool, 'mint_job_id', response['mintJobId'] as string | undefined);
  remember(pool, 'mint_batch_id', response['mintBatchId'] as string | undefined);
  const nested = (key: string) => response[key] as { id?: string } | undefined;
  remember(pool, 'product_id', nested('product')?.id);
  remember(pool, 'product_batch_id', nested('productionBatch')?.id);
  remember(pool, 'import_id', nested('import')?.id);
  for (const unit of (response['units'] as { id?: string }[] | undefined) ?? []) remember(pool, 'unit_id', unit.id);
}

/** Outcome counts of the well-formed binary calls by RPC, printed with FUZZ_STATS=1 (to see how deep the fuzzer reaches). */
const outcomes = new Map<string, Map<string, number>>();

function tally(name: string, outcome: Outcome): void {
  const counts = outcomes.get(name) ?? new Map<string, number>();
  const key = outcome.code === 'ok' ? 'ok' : Code[outcome.code]!;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  outcomes.set(name, counts);
}

/** Fails when the call was refused but row counts changed (a half-written refusal). */
async function expectNothingWrittenOnRefusal(outcome: Outcome, before: Record<string, number>, where: string): Promise<void> {
  if (outcome.code === 'ok') return;
  const after = await rowCounts(app.database.url);
  expect(after, `${where}: refused with ${Code[outcome.code]} "${outcome.message.slice(0, 200)}" but rows changed`).toEqual(before);
}

/** The log line of the library's binary parse fault (collected and reported by its own test). */
function isLoggedBinaryParseFault(line: Record<string, unknown>): boolean {
  const err = line['err'] as { message?: string } | undefined;
  return typeof err?.message === 'string' && libraryFaultMessage.test(err.message.replace(/^\[internal\] /, ''));
}

beforeAll(async () => {
  app = await setupUseCases();
  const started = await startFuzzApi(app.ctx);
  api = started;
  const store = started.store;
  binary = createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1', useBinaryFormat: true });
  brand = await app.seedBrand();
  other = await app.seedBrand();
  pool = { brandId: brand.brandId, otherBrandId: other.brandId, byField: new Map() };
  remember(pool, 'product_id', brand.productId);
  // A few real rows to aim at: a production batch, a minted serial job, a queued lot job, an import.
  const asBrand = { headers: { authorization: `Bearer ${brand.token}` } };
  const mint = createClient(MintService, binary);
  const catalog = createClient(CatalogService, binary);
  const production = await catalog.upsertProductionBatch(
    { brandId: brand.brandId, productId: brand.productId, code: 'FUZZ-1', status: ProductionBatchStatus.READY, quantity: 1000 },
    asBrand,
  );
  remember(pool, 'product_batch_id', production.productionBatch?.id);
  const serial = await mint.submitMintRequest(
    { brandId: brand.brandId, productId: brand.productId, requestedQuantity: 3, identityMode: IdentityMode.SERIAL, activationMode: ActivationMode.FIRST_SCAN },
    asBrand,
  );
  harvest(serial as unknown as Record<string, unknown>);
  await mint.processMintJobBatch({ brandId: brand.brandId, jobId: serial.mintJobId! }, asBrand);
  // Its completion queued a payload pack: generate it, so CreatePayloadPackDownloadUrl has a ready pack.
  const claim = await claimPayloadPack(app.ctx);
  if (claim !== null) {
    await generatePayloadPack(app.ctx, claim, { store });
    remember(pool, 'pack_id', claim.id);
  }
  harvest((await mint.listMintUnits({ brandId: brand.brandId }, asBrand)) as unknown as Record<string, unknown>);
  const lots = await mint.submitMintRequest(
    {
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: 5,
      identityMode: IdentityMode.BATCH,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
      lots: [{ lotCode: 'L1', qty: 5 }],
    },
    asBrand,
  );
  harvest(lots as unknown as Record<string, unknown>);
  const imported = await catalog.startProductImport(
    { brandId: brand.brandId, csv: new TextEncoder().encode('sku,name,commercial_status,mint_readiness_status\nFZ-1,Fuzz,ACTIVE,READY\n') },
    asBrand,
  );
  harvest(imported as unknown as Record<string, unknown>);
  expect(await brokenInvariants(app.database.url)).toEqual([]);
});

afterEach(async () => {
  // After every property: the invariants hold and the server logged no fault.
  expect(await brokenInvariants(app.database.url)).toEqual([]);
  const faults = api.logs.slice(checkedLogLines).filter((line) => Number(line['level']) >= 50 && !isLoggedBinaryParseFault(line));
  checkedLogLines = api.logs.length;
  expect(
    faults.map((line) => jsonText(line).slice(0, 1000)),
    'error lines in the server log',
  ).toEqual([]);
});

afterAll(async () => {
  if (process.env['FUZZ_STATS'] === '1') {
    for (const [name, counts] of outcomes) console.log(`${name}: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  }
  await api?.close();
  await app?.close();
});

describe('well-formed messages with random field values', () => {
  it.each(methodCases)('%s (binary)', async (name, method) => {
    await fc.assert(
      fc.asyncProperty(requestInit(method.input, pool), async (init) => {
        const message = create(method.input, init);
        const before = await rowCounts(app.database.url);
        const outcome = await call(method, message);
        tally(name, outcome);
        expectClearAnswer(method, outcome, true, init);
        await expectNothingWrittenOnRefusal(outcome, before, name);
        harvest(outcome.response);
      }),
      fuzzParameters(),
    );
  });

  it.each(methodCases)('%s (JSON)', async (name, method) => {
    await fc.assert(
      fc.asyncProperty(requestInit(method.input, pool), async (init) => {
        let body: string;
        try {
          body = JSON.stringify(toJson(method.input, create(method.input, init), { useProtoFieldName: true }));
        } catch {
          return; // a value JSON cannot carry (a timestamp out of range): covered by the binary run
        }
        const before = await rowCounts(app.database.url);
        const outcome = await post(method, new TextEncoder().encode(body), 'json');
        expectNoServerStatus(method, outcome, init);
        expectClearAnswer(method, outcome, true, init);
        await expectNothingWrittenOnRefusal(outcome, before, name);
      }),
      fuzzParameters(0.5),
    );
  });
});

describe('malformed bodies', () => {
  /** Headers a client may get wrong: compression it did not apply, a broken timeout, a protocol version. */
  const oddHeaders = fc.record(
    {
      'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'x-unknown'),
      'connect-timeout-ms': fc.constantFrom('0', '-1', 'abc', '99999999999', '1'),
      'connect-protocol-version': fc.constantFrom('1', '2', ''),
    },
    { requiredKeys: [] },
  );

  it.each(methodCases)('%s: random bytes as protobuf', async (name, method) => {
    const bytes = fc.oneof(
      { arbitrary: fc.uint8Array({ maxLength: 300 }), weight: 4 },
      // A valid message with random bytes appended or a prefix cut off.
      {
        arbitrary: fc.tuple(messageInit(method.input, pool), fc.uint8Array({ maxLength: 20 }), fc.nat()).map(([init, tail, cut]) => {
          const valid = toBinary(method.input, create(method.input, init));
          return cut % 2 === 0 ? new Uint8Array([...valid, ...tail]) : valid.subarray(0, cut % (valid.byteLength + 1));
        }),
        weight: 3,
      },
      // A huge length prefix: field 1, wire type 2, length 2^31.
      { arbitrary: fc.constant(new Uint8Array([0x0a, 0x80, 0x80, 0x80, 0x80, 0x08, 0x41])), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(bytes, fc.option(oddHeaders, { freq: 4 }), async (body, headers) => {
        const before = await rowCounts(app.database.url);
        const outcome = await post(method, body, 'proto', (headers ?? {}) as Record<string, string>);
        expectNoServerStatus(method, outcome, body);
        expectClearAnswer(method, outcome, false, body);
        await expectNothingWrittenOnRefusal(outcome, before, name);
      }),
      fuzzParameters(),
    );
  });

  it.each(methodCases)('%s: random JSON', async (name, method) => {
    const fieldNames = method.input.fields.flatMap((f) => [f.name, f.jsonName]);
    const body = fc.oneof(
      { arbitrary: jsonObjectFor([...new Set(fieldNames)]).map(jsonText), weight: 5 },
      { arbitrary: anyJsonText, weight: 2 },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 100 }), weight: 1 },
      {
        arbitrary: fc.constantFrom('', '{', '{"brand_id":', '{"brand_id":"x"', 'null', '[]', '{"a":1}{"b":2}', '\uFEFF{}', '{"brand_id":1e999999}'),
        weight: 1,
      },
    );
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const before = await rowCounts(app.database.url);
        const outcome = await post(method, new TextEncoder().encode(text), 'json');
        expectNoServerStatus(method, outcome, text);
        expectClearAnswer(method, outcome, false, text);
        await expectNothingWrittenOnRefusal(outcome, before, name);
      }),
      fuzzParameters(),
    );
  });

  it('undecodable protobuf bodies are refused as InvalidArgument, never Internal (collected above)', () => {
    expect(undecodableAnsweredInternal.slice(0, 5), `${undecodableAnsweredInternal.length} undecodable bodies answered Internal`).toEqual([]);
  });

  it('an oversized body (8 MiB string field) is refused cleanly on every RPC', async () => {
    const huge = 'x'.repeat(8 * 1024 * 1024);
    for (const method of methods) {
      const body = JSON.stringify({ brand_id: brand.brandId, [method.input.fields.find((f) => f.name !== 'brand_id')?.name ?? 'x']: huge });
      const outcome = await post(method, new TextEncoder().encode(body), 'json');
      expectNoServerStatus(method, outcome, body);
      expectClearAnswer(method, outcome, false, body);
    }
  });
});
