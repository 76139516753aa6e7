// Run by nats-store.test.ts as a child process, then killed with SIGKILL: starts writing a pack to
// the NATS store (NATS_URL, bucket BUCKET, storage path PACK_PATH) with small segments and chunks,
// writes two and a half segments of one file, and prints WRITTEN once the two full segments are
// stored and a third segment's put is cut off after 4 of its 5 chunks: what a killed executor leaves.
// The store puts a segment only once it is full, in a few milliseconds, so the cut put is made here
// as the object store makes every put (chunk messages first, the meta message last), with a body
// that stops sending. It never commits.

import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { createNatsPackStore, objectStoreStream } from '../src/index.ts';

const bucket = process.env['BUCKET']!;
const nc = await connect({ servers: process.env['NATS_URL']! });
const store = await createNatsPackStore(nc, { bucket, segmentBytes: 10_000, chunkBytes: 1024 });
const writer = await store.begin(process.env['PACK_PATH']!);
writer.file('units.csv').write(Buffer.alloc(25_000, 'x'));
// The third segment's put, cut off: 5,000 bytes are 5 chunks, and the object store publishes a
// chunk only once more bytes follow it.
let cut!: ReadableStreamDefaultController<Uint8Array>;
void (await new Objm(nc).open(bucket)).put(
  { name: `${process.env['PACK_PATH']!}/cut/units.csv.2`, options: { max_chunk_size: 1024 } },
  new ReadableStream<Uint8Array>({ start: (controller) => void (cut = controller) }),
);
cut.enqueue(new Uint8Array(5_000));
// Segments 0 and 1 complete (10 chunks each, then their meta); the cut segment has 4 of its 5 chunks.
const jsm = await jetstreamManager(nc);
for (;;) {
  const { state } = await jsm.streams.info(objectStoreStream(bucket), { subjects_filter: `$O.${bucket}.C.>` });
  const counts = Object.values(state.subjects ?? {});
  if (counts.filter((n) => n === 10).length >= 2 && counts.some((n) => n === 4)) break;
  await sleep(20);
}
process.stdout.write('WRITTEN\n');
await sleep(600_000);
