// The NATS JetStream Object Store pack store against the shared nats-server: commit visibility,
// replacement, abort, removal, range reads across segment boundaries, and the same archive bytes as
// the filesystem store. Every test file uses a bucket of its own, deleted afterwards.

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { jetstreamManager } from '@nats-io/jetstream';
import { getSha256Backend, Objm } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../../../test/support/context.ts';
import {
  createFsPackStore,
  createNatsPackStore,
  isStoreNotFoundError,
  objectStoreStream,
  StorePathError,
  tarSize,
  tarStream,
  type PackStore,
} from '../src/index.ts';

let nc: NatsConnection;
let store: PackStore;
let fsRoot: string;
const bucket = `T_PACKS_${randomBytes(5).toString('hex').toUpperCase()}`;
// Small segments and chunks, so that a few KiB cross several of each.
const segmentBytes = 10_000;
const chunkBytes = 1024;

beforeAll(async () => {
  nc = await connect({ servers: testInfra().natsUrl });
  store = await createNatsPackStore(nc, { bucket, segmentBytes, chunkBytes });
  fsRoot = await mkdtemp(join(tmpdir(), 'store-range-'));
});

afterAll(async () => {
  await (await jetstreamManager(nc)).streams.delete(objectStoreStream(bucket)).catch(() => undefined);
  await nc?.close();
  await rm(fsRoot, { recursive: true, force: true });
});

async function writePack(target: PackStore, path: string, files: Record<string, string | Buffer>): Promise<void> {
  const writer = await target.begin(path);
  for (const [name, content] of Object.entries(files)) writer.file(name).end(content);
  await writer.commit();
}

const text = async (path: string, file: string) => (await buffer((await store.open(path, file)).stream())).toString();

describe('createNatsPackStore', () => {
  it('shows a pack only once committed, and replaces it whole when written again', async () => {
    const writer = await store.begin('brand/pack1');
    writer.file('a.txt').end('one');
    writer.file('b.txt').end('uno');
    await expect(store.open('brand/pack1', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
    await writer.commit();
    expect((await store.open('brand/pack1', 'a.txt')).size).toBe(3);
    expect(await text('brand/pack1', 'a.txt')).toBe('one');
    await writePack(store, 'brand/pack1', { 'c.txt': 'two' });
    await expect(store.open('brand/pack1', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
    expect(await text('brand/pack1', 'c.txt')).toBe('two');
    // The first generation's objects are gone: only the index and the new file remain.
    const bucketStore = await new Objm(nc).open(bucket);
    const names = (await bucketStore.list())
      .filter((o) => !o.deleted && o.name.startsWith('brand/pack1/'))
      .map((o) => o.name.replace(/\/[0-9a-f]{16}\//, '/G/'));
    expect(names.sort()).toEqual(['brand/pack1/G/c.txt.0', 'brand/pack1/pack.json']);
  });

  it('keeps large files byte for byte across segments and leaves nothing visible when aborted', async () => {
    const big = randomBytes(3 * segmentBytes + 777);
    await writePack(store, 'brand/pack2', { 'big.bin': big, 'empty.txt': '' });
    const file = await store.open('brand/pack2', 'big.bin');
    expect(file.size).toBe(big.length);
    expect(
      createHash('sha256')
        .update(await buffer(file.stream()))
        .digest('hex'),
    ).toBe(createHash('sha256').update(big).digest('hex'));
    expect((await buffer((await store.open('brand/pack2', 'empty.txt')).stream())).length).toBe(0);

    const writer = await store.begin('brand/pack3');
    writer.file('a.txt').write('partial');
    await writer.abort();
    await expect(store.open('brand/pack3', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
  });

  it('keeps every byte when the writer fills one Buffer anew after each write, across many segments', async () => {
    // The contract of PackWriter.file: a written Buffer is the caller's again at its callback.
    // Each segment is put from one of the file's two buffers while the other fills, so a
    // segment stored from a buffer filled again too early would hold later bytes.
    const expected = randomBytes(7 * segmentBytes + 123);
    const reused = Buffer.alloc(3_001);
    const writer = await store.begin('brand/reused');
    const file = writer.file('units.bin');
    for (let at = 0; at < expected.length; at += reused.length) {
      const n = expected.copy(reused, 0, at);
      await new Promise<void>((resolve, reject) => file.write(reused.subarray(0, n), (error) => (error ? reject(error) : resolve())));
    }
    file.end();
    await writer.commit();
    const stored = await store.open('brand/reused', 'units.bin');
    expect(stored.size).toBe(expected.length);
    expect((await buffer(stored.stream())).equals(expected)).toBe(true);
  });

  it('digests its objects with node:crypto, the same SHA-256 the object store records', async () => {
    // The object store's default is a pure-JavaScript SHA-256 that held the executor's event loop for most of a pack's write.
    expect(getSha256Backend()).toBe('native');
    const content = randomBytes(segmentBytes - 10);
    await writePack(store, 'brand/digest', { 'one.bin': content });
    const bucketStore = await new Objm(nc).open(bucket);
    const [segment] = (await bucketStore.list()).filter((o) => !o.deleted && /^brand\/digest\/[0-9a-f]{16}\/one\.bin\.0$/.test(o.name));
    expect(segment?.digest).toBe(`SHA-256=${createHash('sha256').update(content).digest('base64url')}=`);
  });

  it('reads any byte range, within a chunk, across chunks and across segments', async () => {
    const big = randomBytes(2 * segmentBytes + 333);
    await writePack(store, 'brand/pack4', { 'big.bin': big });
    const file = await store.open('brand/pack4', 'big.bin');
    const ranges: [number, number][] = [
      [0, 0],
      [5, 900],
      [1000, 1100],
      [chunkBytes - 1, chunkBytes],
      [segmentBytes - 10, segmentBytes + 10],
      [segmentBytes, 2 * segmentBytes - 1],
      [123, big.length - 1],
      [big.length - 1, big.length - 1],
    ];
    for (const [start, end] of ranges) {
      expect((await buffer(file.stream({ start, end }))).equals(big.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
  });

  it('serves the same archive bytes and ranges as the filesystem store', async () => {
    const content = { 'manifest.json': '{"a":1}\n', 'units.csv': 'x,'.repeat(9000), 'units.jsonl': 'y'.repeat(513) };
    const fsStore = createFsPackStore(fsRoot);
    await writePack(store, 'brand/pack5', content);
    await writePack(fsStore, 'brand/pack5', content);
    const entries = async (s: PackStore) =>
      Promise.all(Object.keys(content).map(async (name) => ({ name, file: await s.open('brand/pack5', name), mtime: new Date(0) })));
    const [fromNats, fromFs] = [await entries(store), await entries(fsStore)];
    const whole = await buffer(tarStream(fromFs));
    expect(whole.length).toBe(tarSize(fromNats));
    expect((await buffer(tarStream(fromNats))).equals(whole)).toBe(true);
    for (const [start, end] of [
      [0, 511],
      [500, 700],
      [512, 530],
      [600, whole.length - 1],
      [18_000, 19_000],
      [whole.length - 1024, whole.length - 1],
    ] as const) {
      expect((await buffer(tarStream(fromNats, { start, end }))).equals(whole.subarray(start, end + 1)), `nats ${start}-${end}`).toBe(true);
      expect((await buffer(tarStream(fromFs, { start, end }))).equals(whole.subarray(start, end + 1)), `fs ${start}-${end}`).toBe(true);
    }
  });

  it('removes a pack, and refuses paths that could be URLs or escape', async () => {
    await writePack(store, 'brand/pack6', { 'a.txt': 'x' });
    await store.remove('brand/pack6');
    await expect(store.open('brand/pack6', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
    await store.remove('brand/pack6');
    for (const path of ['../x', '/abs', 'https://x', '', 'a//b', '.hidden']) await expect(store.begin(path), path).rejects.toBeInstanceOf(StorePathError);
  });
  it('sweeps what a writer killed mid-pack left (segments without an index, chunks without a meta) once old enough, and nothing else', async () => {
    await writePack(store, 'sweep/kept', { 'a.txt': 'committed' });
    const child = spawn(process.execPath, [join(import.meta.dirname, 'interrupted-pack-write.ts')], {
      env: { ...process.env, NATS_URL: testInfra().natsUrl, BUCKET: bucket, PACK_PATH: 'sweep/killed' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    for (let i = 0; i < 600 && !out.includes('WRITTEN'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(out).toContain('WRITTEN');
    const bucketStore = await new Objm(nc).open(bucket);
    const jsm = await jetstreamManager(nc);
    const leftovers = async () => {
      const objects = await bucketStore.list();
      const live = new Set(objects.map((o) => o.nuid));
      const { state } = await jsm.streams.info(objectStoreStream(bucket), { subjects_filter: `$O.${bucket}.C.>` });
      return {
        segments: objects.filter((o) => o.name.startsWith('sweep/killed/')).length,
        metaless: Object.keys(state.subjects ?? {}).filter((s) => !live.has(s.split('.').pop()!)).length,
      };
    };
    // What the killed writer left: two complete segment objects under no index, and the chunks of the third.
    expect(await leftovers()).toEqual({ segments: 2, metaless: 1 });
    await expect(store.open('sweep/killed', 'units.csv')).rejects.toSatisfy(isStoreNotFoundError);
    // Younger than the cutoff: kept (a write could still be going on).
    expect(await store.sweep(new Date(Date.now() - 3_600_000))).toBe(0);
    expect(await leftovers()).toEqual({ segments: 2, metaless: 1 });
    expect(await store.sweep(new Date(Date.now() + 60_000))).toBe(3);
    expect(await leftovers()).toEqual({ segments: 0, metaless: 0 });
    // Committed packs are untouched, and a second sweep finds nothing.
    expect(await text('sweep/kept', 'a.txt')).toBe('committed');
    expect(await text('brand/pack1', 'c.txt')).toBe('two');
    expect(await store.sweep(new Date(Date.now() + 60_000))).toBe(0);
  }, 60_000);
});
