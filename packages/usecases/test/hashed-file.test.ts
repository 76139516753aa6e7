// A pack file written through HashedFile into each real pack store (the filesystem and the NATS
// JetStream Object Store on the shared nats-server): writes of bytes and of text, of every size (gathered small pieces,
// pieces that overflow the gathering buffer, pieces larger than it), some of them not awaited, land
// in order and intact, and the size and SHA-256 it reports are those of the stored file. HashedFile
// fills its buffers anew once a write's callback ran; a store that still held a view of one (the
// NATS store's segment bodies are read after the callback) shows here as stored bytes that differ
// from the reported hash.

import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsPackStore, createNatsPackStore, objectStoreStream, type PackStore } from '@mint/store';
import { testInfra } from '../../../test/support/context.ts';
import { HashedFile } from '../src/packs/pack-formats.ts';

let dir: string;
let nc: NatsConnection;
const bucket = `T_HASHED_${randomBytes(5).toString('hex').toUpperCase()}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hashed-file-'));
  nc = await connect({ servers: testInfra().natsUrl });
});

afterAll(async () => {
  await (await jetstreamManager(nc)).streams.delete(objectStoreStream(bucket)).catch(() => undefined);
  await nc?.close();
  await rm(dir, { recursive: true, force: true });
});

const stores: [string, () => Promise<PackStore>][] = [
  ['filesystem', async () => createFsPackStore(dir)],
  ['NATS object', () => createNatsPackStore(nc, { bucket, segmentBytes: 1_000_000, chunkBytes: 64 * 1024 })],
];

describe.each(stores)('HashedFile into the %s store', (_name, makeStore) => {
  it('stores every write in order and reports the stored bytes and their SHA-256', async () => {
    const store = await makeStore();
    const writer = await store.begin('brand/pack');
    const file = new HashedFile(writer, 'units.csv');
    const sizes = [1, 14_000, 200_000, 60_000, 262_144, 5, 700_000, 131_072, 131_072, 0, 300_000, 17];
    for (let i = 0; i < 200; i++) sizes.push(1 + ((i * 7919) % 16_000));
    // Every fourth piece is text (encoded as UTF-8 straight into the gathering buffer), with
    // characters of two and four bytes that land on the buffer's edges.
    const text = (n: number) => 'xé🙂'.repeat(Math.ceil(n / 7)).slice(0, n);
    const pieces = sizes.map((n, i) => (i % 4 === 2 ? text(n) : randomBytes(n)));
    const pending: Promise<void>[] = [];
    for (const [i, piece] of pieces.entries()) {
      const written = file.write(piece);
      if (i % 3 === 0) await written;
      else pending.push(written);
    }
    await file.write('the end\n');
    await Promise.all(pending);
    const { bytes, sha256 } = await file.end();
    await writer.commit();

    const expected = Buffer.concat([...pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)), Buffer.from('the end\n')]);
    const stored = await buffer((await store.open('brand/pack', 'units.csv')).stream());
    expect(stored.length).toBe(expected.length);
    expect(stored.equals(expected)).toBe(true);
    expect(bytes).toBe(expected.length);
    expect(sha256).toBe(createHash('sha256').update(expected).digest('hex'));
  });
});
