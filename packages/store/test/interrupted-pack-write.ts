// Run by nats-store.test.ts as a child process, then killed with SIGKILL: starts writing a pack to
// the NATS store (NATS_URL, bucket BUCKET, storage path PACK_PATH) with small segments and chunks,
// writes two and a half segments of one file, and prints WRITTEN once the half segment's first
// chunks are in the stream. It never commits: what it wrote is what a killed executor leaves.

import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { createNatsPackStore } from '../src/index.ts';

const bucket = process.env['BUCKET']!;
const nc = await connect({ servers: process.env['NATS_URL']! });
const store = await createNatsPackStore(nc, { bucket, segmentBytes: 10_000, chunkBytes: 1024 });
const writer = await store.begin(process.env['PACK_PATH']!);
writer.file('units.csv').write(Buffer.alloc(25_000, 'x'));
// Segments 0 and 1 complete (10 chunks each, then their meta); segment 2 gets 4 of its 5 chunks
// while its put waits for more data.
const jsm = await jetstreamManager(nc);
for (;;) {
  const { state } = await jsm.streams.info(`OBJ_${bucket}`, { subjects_filter: `$O.${bucket}.C.>` });
  const counts = Object.values(state.subjects ?? {});
  if (counts.filter((n) => n === 10).length >= 2 && counts.some((n) => n === 4)) break;
  await sleep(20);
}
process.stdout.write('WRITTEN\n');
await sleep(600_000);
