// NATS_REPLICAS on a real 3-node JetStream cluster (test/support/nats-cluster.ts): the job bus
// creates its stream and consumers with the configured replicas and raises an existing
// single-replica stream to them, and the pack store's bucket is replicated the same way, so a
// committed pack is still read after the node leading its bucket is killed.

import { randomBytes } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectJetStreamBus, type JobBus } from '@mint/bus';
import { createNatsPackStore, objectStoreStream } from '@mint/store';
import { freshStreamNames } from './support/nats.ts';
import { startNatsCluster, type NatsCluster } from './support/nats-cluster.ts';

let cluster: NatsCluster;
let nc: NatsConnection;
const buses: JobBus[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster({ size: 3 });
  nc = await connect({ servers: cluster.url.split(',') });
}, 60_000);

afterAll(async () => {
  for (const bus of buses) await bus.close().catch(() => undefined);
  await nc?.close();
  await cluster?.stop();
});

const replicasOf = async (stream: string) => {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const consumers = [];
  for await (const c of jsm.consumers.list(stream)) consumers.push(c.config.num_replicas ?? 0);
  return { stream: info.config.num_replicas, placed: 1 + (info.cluster?.replicas?.length ?? 0), consumers };
};

describe('NATS_REPLICAS on a 3-node JetStream cluster', () => {
  it('creates the job stream and its consumers with 3 replicas, and raises an existing 1-replica stream to 3', async () => {
    const fresh = freshStreamNames();
    buses.push(await connectJetStreamBus({ url: cluster.url, ...fresh, replicas: 3 }));
    expect(await replicasOf(fresh.stream)).toEqual({ stream: 3, placed: 3, consumers: [3, 3] });

    const existing = freshStreamNames();
    buses.push(await connectJetStreamBus({ url: cluster.url, ...existing }));
    expect(await replicasOf(existing.stream)).toEqual({ stream: 1, placed: 1, consumers: [1, 1] });
    buses.push(await connectJetStreamBus({ url: cluster.url, ...existing, replicas: 3 }));
    await cluster.waitCurrent(existing.stream);
    expect(await replicasOf(existing.stream)).toEqual({ stream: 3, placed: 3, consumers: [3, 3] });
  }, 60_000);

  it('replicates the pack bucket, so a pack is read whole after the node leading it is killed', async () => {
    const bucket = `T_PACKS_${randomBytes(4).toString('hex').toUpperCase()}`;
    const store = await createNatsPackStore(nc, { bucket, replicas: 3, segmentBytes: 100_000, chunkBytes: 16 * 1024 });
    const content = randomBytes(250_000);
    const writer = await store.begin('brand/pack');
    writer.file('units.csv').end(content);
    await writer.commit();
    await cluster.waitCurrent(objectStoreStream(bucket));
    const leader = cluster.node((await cluster.placement(objectStoreStream(bucket))).leader);
    await leader.kill('SIGKILL');
    try {
      const file = await store.open('brand/pack', 'units.csv');
      expect((await buffer(file.stream())).equals(content)).toBe(true);
      expect((await buffer(file.stream({ start: 99_990, end: 200_009 }))).equals(content.subarray(99_990, 200_010))).toBe(true);
    } finally {
      await leader.restart();
    }
  }, 60_000);
});
