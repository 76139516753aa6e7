// Signed payload pack downloads end to end: CreatePayloadPackDownloadUrl over Connect (in process
// where only the RPC matters), then the public /downloads route on the real server: the archive's
// contents, the tamper matrix, expiry and key rotation.

import { text } from 'node:stream/consumers';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Code, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MintService } from '@mint/contract';
import { query } from '../../../test/support/sql.ts';
import type { SigningKey } from '@mint/domain';
import { pipeline } from 'node:stream/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createFsPackStore, createNatsPackStore, objectStoreStream, type PackStore } from '@mint/store';
import { testInfra } from '../../../test/support/context.ts';
import { claimPayloadPack, generatePayloadPack, type UseCaseContext } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCompleted, tempStoreDir } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { refusedDownloadBody } from '../src/downloads/routes.ts';
import { bearer, codeOf, inProcessApi, startTestApi, type TestApi } from './support.ts';
import { untar } from '../../../test/support/untar.ts';

const k1: SigningKey = { id: 'k1', secret: new Uint8Array(32).fill(1) };
const k2: SigningKey = { id: 'k2', secret: new Uint8Array(32).fill(2) };

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
let store: PackStore;
/** The same packs copied into a NATS Object Store bucket of this file's own. */
let natsStore: PackStore;
let nc: NatsConnection;
const natsBucket = `T_DL_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
let brand: SeededBrand;
let readyPack: { id: string; batchId: string };
let pendingPack: { id: string };
const running: TestApi[] = [];
let clockMs = Date.now();
let ctx: UseCaseContext;

/** Starts an API over the shared database with `keys`, the test clock and captured logs. */
async function startWith(keys: readonly SigningKey[], packStore = store): Promise<{ baseUrl: string; mint: Client<typeof MintService> }> {
  const api = await startTestApi(app, { ctx, shutdownTimeoutMs: 2_000, downloads: { keys, store: packStore } });
  running.push(api);
  return { baseUrl: api.baseUrl, mint: createClient(MintService, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1' })) };
}

/** The RPCs with `keys` and the test clock, in process. */
const inProcessWith = (keys: readonly SigningKey[]) => inProcessApi(app, { ctx, downloads: { keys, store } });

async function packOfBatch(batchId: string): Promise<string> {
  const [row] = await query<{ id: string }>(app.db.em.fork(), 'select id from payload_packs where mint_batch_id = ?', [batchId]);
  return row!.id;
}

beforeAll(async () => {
  app = await setupUseCases();
  ctx = { ...app.ctx, clock: () => new Date(clockMs) };
  storeDir = await tempStoreDir();
  store = createFsPackStore(storeDir.dir);
  brand = await app.seedBrand();
  const ready = await mintCompleted(app.ctx, brand, 2_000);
  readyPack = { id: await packOfBatch(ready.mintBatchId), batchId: ready.mintBatchId };
  const claim = await claimPayloadPack(app.ctx);
  expect(claim?.id).toBe(readyPack.id);
  expect(await generatePayloadPack(app.ctx, claim!, { store })).toMatchObject({ kind: 'ready' });
  const pending = await mintCompleted(app.ctx, brand, 5);
  pendingPack = { id: await packOfBatch(pending.mintBatchId) };
  nc = await connect({ servers: testInfra().natsUrl });
  natsStore = await createNatsPackStore(nc, { bucket: natsBucket, segmentBytes: 64 * 1024, chunkBytes: 8 * 1024 });
  const storagePath = `${brand.brandId}/${readyPack.id}`;
  const writer = await natsStore.begin(storagePath);
  // The same pack in the bucket: its manifest, SHA256SUMS and every file the manifest lists.
  const manifest = JSON.parse(await text((await store.open(storagePath, 'manifest.json')).stream())) as { files: { name: string }[] };
  for (const name of ['manifest.json', 'SHA256SUMS', ...manifest.files.map((f) => f.name)])
    await pipeline((await store.open(storagePath, name)).stream(), writer.file(name));
  await writer.commit();
});
afterAll(async () => {
  await (await jetstreamManager(nc)).streams.delete(objectStoreStream(natsBucket)).catch(() => undefined);
  await nc?.close();
  for (const api of running) await api.close();
  await app.close();
  await storeDir.remove();
});

describe('CreatePayloadPackDownloadUrl', () => {
  it('issues a URL valid five minutes by default, whose download is the pack as stored', async () => {
    const { mint } = await startWith([k1]);
    const issued = await mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: readyPack.id }, bearer(brand.token));
    expect(issued.ok).toBe(true);
    const url = new URL(issued.url);
    expect(url.pathname).toBe(`/downloads/${brand.brandId}/${readyPack.id}/payload-pack-${readyPack.id}.tar`);
    expect([...url.searchParams.keys()]).toEqual(['exp', 'kid', 'sig']);
    expect(Number(issued.expiresAt!.seconds)).toBe(Math.floor(clockMs / 1000) + 300);

    // The issued URL is on PUBLIC_BASE_URL (the test context's); fetch the same path here.
    const { baseUrl } = await startWith([k1]);
    const response = await fetch(`${baseUrl}${url.pathname}${url.search}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-tar');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="payload-pack-${readyPack.id}.tar"`);
    const files = untar(Buffer.from(await response.arrayBuffer()));
    expect([...files.keys()]).toEqual(['manifest.json', 'SHA256SUMS', 'units.csv', 'units.jsonl', 'epcis.json']);
    const folder = join(storeDir.dir, brand.brandId, readyPack.id);
    for (const [name, content] of files) expect(content.equals(await readFile(join(folder, name))), name).toBe(true);
    const manifest = JSON.parse(files.get('manifest.json')!.toString()) as { files: { name: string; sha256: string }[] };
    for (const f of manifest.files) expect(createHash('sha256').update(files.get(f.name)!).digest('hex')).toBe(f.sha256);
    expect(files.get('units.csv')!.toString().trim().split('\n')).toHaveLength(2_001);
  });

  it('refuses a pending pack (FailedPrecondition), a ttl over 15 minutes, and another brand', async () => {
    const { mint } = inProcessWith([k1]);
    expect(await codeOf(mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: pendingPack.id }, bearer(brand.token)))).toBe(
      Code.FailedPrecondition,
    );
    expect(await codeOf(mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: readyPack.id, ttlSeconds: 901 }, bearer(brand.token)))).toBe(
      Code.InvalidArgument,
    );
    const other = await app.seedBrand();
    expect(await codeOf(mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: readyPack.id }, bearer(other.token)))).toBe(Code.PermissionDenied);
    expect(await codeOf(mint.createPayloadPackDownloadUrl({ brandId: other.brandId, packId: readyPack.id }, bearer(other.token)))).toBe(Code.NotFound);
  });

  it('never puts a URL in ListPayloadPacks', async () => {
    const { mint } = inProcessWith([k1]);
    const list = await mint.listPayloadPacks({ brandId: brand.brandId }, bearer(brand.token));
    expect(list.packs.map((p) => p.id).sort()).toEqual([readyPack.id, pendingPack.id].sort());
    expect(list.packs.find((p) => p.id === readyPack.id)?.storagePath).toBe(`${brand.brandId}/${readyPack.id}`);
    expect(JSON.stringify(list, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toMatch(/https?:|sig=/);
  });
});

describe('the download route', () => {
  async function issue(keys: readonly SigningKey[], packId = readyPack.id, ttlSeconds?: number) {
    const { mint, baseUrl } = await startWith(keys);
    const issued = await mint.createPayloadPackDownloadUrl(
      { brandId: brand.brandId, packId, ...(ttlSeconds === undefined ? {} : { ttlSeconds }) },
      bearer(brand.token),
    );
    const url = new URL(issued.url);
    return { baseUrl, path: url.pathname, params: url.searchParams };
  }
  const get = async (baseUrl: string, path: string, params: URLSearchParams) => {
    const response = await fetch(`${baseUrl}${path}?${params.toString()}`);
    return { status: response.status, body: await response.text() };
  };

  it('answers every tampered, truncated, foreign or incomplete URL with the same 403 body', async () => {
    const { baseUrl, path, params } = await issue([k1]);
    const sig = params.get('sig')!;
    const exp = params.get('exp')!;
    expect((await get(baseUrl, path, params)).status).toBe(200);
    const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
    const other = await issue([k1], readyPack.id);
    const otherPackBrand = await app.seedBrand();
    const variants: [string, string, URLSearchParams][] = [
      ['flipped first char', path, new URLSearchParams({ exp, kid: 'k1', sig: flip(sig, 0) })],
      ['flipped last char', path, new URLSearchParams({ exp, kid: 'k1', sig: flip(sig, sig.length - 1) })],
      ['truncated signature', path, new URLSearchParams({ exp, kid: 'k1', sig: sig.slice(0, 20) })],
      ['longer expiry', path, new URLSearchParams({ exp: String(Number(exp) + 3600), kid: 'k1', sig })],
      ['unknown key id', path, new URLSearchParams({ exp, kid: 'k9', sig })],
      ['no signature', path, new URLSearchParams({ exp, kid: 'k1' })],
      ['no parameters', path, new URLSearchParams()],
      ['another pack', path.replaceAll(readyPack.id, pendingPack.id), params],
      ['another brand', path.replace(brand.brandId, otherPackBrand.brandId), params],
      ['another file', path.replace('.tar', '.zip'), params],
      ['trailing path', `${path}/x`, params],
    ];
    expect(other.params.get('sig')).toBe(sig);
    const bodies = new Set<string>();
    for (const [label, p, q] of variants) {
      const answer = await get(baseUrl, p, q);
      expect(answer.status, label).toBe(403);
      bodies.add(answer.body);
    }
    expect([...bodies]).toEqual([refusedDownloadBody]);
  });

  it("refuses another pack's valid signature on this pack's path", async () => {
    const second = await mintCompleted(app.ctx, brand, 3);
    const secondPack = await packOfBatch(second.mintBatchId);
    for (;;) {
      const claim = await claimPayloadPack(app.ctx);
      if (claim === null) break;
      await generatePayloadPack(app.ctx, claim, { store });
    }
    const mine = await issue([k1]);
    const theirs = await issue([k1], secondPack);
    expect((await get(theirs.baseUrl, theirs.path, theirs.params)).status).toBe(200);
    const swapped = await get(mine.baseUrl, mine.path, theirs.params);
    expect(swapped).toEqual({ status: 403, body: refusedDownloadBody });
  });

  it('expires: valid up to the last second of its ttl, then the same 403 (fake clock)', async () => {
    const started = clockMs;
    try {
      const { baseUrl, path, params } = await issue([k1], readyPack.id, 60);
      clockMs = started + 59_000;
      expect((await get(baseUrl, path, params)).status).toBe(200);
      clockMs = Math.floor(started / 1000) * 1000 + 60_000;
      expect(await get(baseUrl, path, params)).toEqual({ status: 403, body: refusedDownloadBody });
    } finally {
      clockMs = started;
    }
  });

  it('rotates keys: old URLs work while their key is listed, stop when it is removed; new URLs use the first key', async () => {
    const old = await issue([k1]);
    expect(old.params.get('kid')).toBe('k1');
    const rotated = await startWith([k2, k1]);
    expect((await get(rotated.baseUrl, old.path, old.params)).status).toBe(200);
    const fresh = await issue([k2, k1]);
    expect(fresh.params.get('kid')).toBe('k2');
    const retired = await startWith([k2]);
    expect(await get(retired.baseUrl, old.path, old.params)).toEqual({ status: 403, body: refusedDownloadBody });
    expect((await get(retired.baseUrl, fresh.path, fresh.params)).status).toBe(200);
  });

  it('never writes a signature to the logs', async () => {
    const { baseUrl, path, params } = await issue([k1]);
    await get(baseUrl, path, new URLSearchParams({ exp: params.get('exp')!, kid: 'k1', sig: `${params.get('sig')!.slice(0, 42)}Q` }));
    await get(baseUrl, path, params);
    const logs = running.map((api) => api.rawLogs()).join('');
    expect(logs).toContain('download refused');
    expect(logs).not.toContain(params.get('sig')!);
    expect(logs).not.toContain(params.get('sig')!.slice(0, 42));
    expect(logs).not.toMatch(/sig=/);
  });
});

describe.each([
  ['filesystem store', () => store],
  ['NATS Object Store bucket', () => natsStore],
] as const)('Range downloads from the %s', (_label, packStore) => {
  async function fetchPack(headers: Record<string, string> = {}) {
    const { mint, baseUrl } = await startWith([k1], packStore());
    const issued = await mint.createPayloadPackDownloadUrl({ brandId: brand.brandId, packId: readyPack.id }, bearer(brand.token));
    const url = new URL(issued.url);
    const response = await fetch(`${baseUrl}${url.pathname}${url.search}`, { headers });
    return { response, body: Buffer.from(await response.arrayBuffer()) };
  }

  it('resumes: any single range answers 206 with exactly those bytes, and the parts make the whole archive', async () => {
    const { response: full, body: whole } = await fetchPack();
    expect(full.status).toBe(200);
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    const etag = full.headers.get('etag')!;
    const size = whole.length;
    const manifest = JSON.parse(untar(whole).get('manifest.json')!.toString()) as { files: { name: string; sha256: string }[] };
    for (const f of manifest.files) expect(createHash('sha256').update(untar(whole).get(f.name)!).digest('hex')).toBe(f.sha256);
    const cases: [string, number, number][] = [
      ['bytes=0-511', 0, 511],
      ['bytes=100-1000', 100, 1000],
      [`bytes=${size - 700}-`, size - 700, size - 1],
      ['bytes=-1024', size - 1024, size - 1],
      [`bytes=5000-${size + 999}`, 5000, size - 1],
    ];
    for (const [header, start, end] of cases) {
      const { response, body } = await fetchPack({ range: header, 'if-range': etag });
      expect(response.status, header).toBe(206);
      expect(response.headers.get('content-range'), header).toBe(`bytes ${start}-${end}/${size}`);
      expect(Number(response.headers.get('content-length')), header).toBe(end - start + 1);
      expect(body.equals(whole.subarray(start, end + 1)), header).toBe(true);
    }
    // A download cut after 3 000 bytes resumes from there into the same archive.
    const { body: rest } = await fetchPack({ range: 'bytes=3000-', 'if-range': etag });
    expect(Buffer.concat([whole.subarray(0, 3000), rest]).equals(whole)).toBe(true);
  });

  it('answers 416 past the end, and the whole archive for a stale If-Range or several ranges', async () => {
    const { body: whole } = await fetchPack();
    const beyond = await fetchPack({ range: `bytes=${whole.length}-` });
    expect(beyond.response.status).toBe(416);
    expect(beyond.response.headers.get('content-range')).toBe(`bytes */${whole.length}`);
    expect(JSON.parse(beyond.body.toString())).toMatchObject({ ok: false, error: 'range_not_satisfiable' });
    for (const headers of [{ range: 'bytes=0-10', 'if-range': '"another-version"' }, { range: 'bytes=0-10,20-30' }, { range: 'lines=1-2' }] as Record<
      string,
      string
    >[]) {
      const { response, body } = await fetchPack(headers);
      expect(response.status, JSON.stringify(headers)).toBe(200);
      expect(body.equals(whole), JSON.stringify(headers)).toBe(true);
    }
  });
});
