// The JetStream bus against a real nats-server: the shared one for the JobBus contract and
// JetStream's own behaviour, and a private child process for the restart test. Every test
// gets its own stream and subject prefix, deleted afterwards.

import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../../../test/support/context.ts';
import { freshStreamNames, startNatsServer } from '../../../test/support/nats.ts';
import type { NatsServer } from '../../../test/support/nats.ts';
import { connectJetStreamBus, isJobBusError } from '../src/index.ts';
import type { JetStreamBusOptions, JobBus, JobRef } from '../src/index.ts';
import { job, jobBusContract, until as untilWithin } from './job-bus-contract.ts';

interface Bundle {
  readonly bus: JobBus;
  readonly stream: string;
  readonly subjectPrefix: string;
  /** Messages still stored in the test's stream (acked and termed ones are removed). */
  storedMessages(): Promise<number>;
}

let admin: { nc: NatsConnection; jsm: JetStreamManager } | undefined;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const nc = await connect({ servers: testInfra().natsUrl });
  admin = { nc, jsm: await jetstreamManager(nc) };
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await admin?.nc.close();
});

/** A bus on a fresh stream of the shared server; closed and its stream deleted after the test. */
async function setup(options: Partial<JetStreamBusOptions> = {}): Promise<Bundle> {
  const names = freshStreamNames();
  const bus = await connectJetStreamBus({ url: testInfra().natsUrl, ...names, ...options });
  cleanups.push(async () => {
    await bus.close();
    await admin?.jsm.streams.delete(names.stream).catch(() => false);
  });
  return {
    bus,
    stream: names.stream,
    subjectPrefix: names.subjectPrefix,
    storedMessages: async () => {
      if (!admin) throw new Error('no admin connection');
      return (await admin.jsm.streams.info(names.stream)).state.messages;
    },
  };
}

/** Resolves once `predicate` holds, failing after `timeoutMs` (default 5 s). */
const until = (predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000, what?: string) => untilWithin(predicate, timeoutMs, what);

describe('connectJetStreamBus', () => {
  jobBusContract((options) => setup(options), { quietMs: 500, workMs: 300, pastAckWaitMs: 1_500, timeoutMs: 5_000 });

  it('delivers a job published twice with the same id only once, also after its ack inside the duplicate window', async () => {
    const { bus } = await setup();
    const published = job();
    await bus.publish(published);
    await bus.publish({ ...published });
    expect(await bus.pending('mint')).toBe(1);
    const seen: JobRef[] = [];
    bus.subscribe('mint', async (msg) => {
      seen.push(msg.job);
      await msg.ack();
    });
    await until(() => seen.length === 1);
    await bus.publish(published); // within the duplicate window, even after ack
    await sleep(500);
    expect(seen).toHaveLength(1);
  });

  it('stores every job announced in one turn, also when the bus closes right after the announces', async () => {
    const { bus, storedMessages } = await setup();
    const announced = Array.from({ length: 20 }, () => job());
    for (const j of announced) bus.announce(j);
    await bus.close();
    await until(async () => (await storedMessages()) === announced.length, 5_000, `${announced.length} announced jobs stored`);
  });

  it('delivers a deliberate republish inside the duplicate window, once per tag', async () => {
    const { bus } = await setup();
    const published = job();
    const seen: JobRef[] = [];
    bus.subscribe('mint', async (msg) => {
      seen.push(msg.job);
      await msg.ack();
    });
    await bus.publish(published);
    await until(() => seen.length === 1);
    await bus.publish(published, { republish: 'sweep-1' });
    await bus.publish(published, { republish: 'sweep-1' });
    await until(() => seen.length === 2, 5_000, 'republish delivered');
    await sleep(500);
    expect(seen).toEqual([published, published]);
  });
  it('working() keeps a long job from being redelivered past a short ack wait', async () => {
    const { bus } = await setup({ ackWaitMs: 1_000 });
    const deliveries: number[] = [];
    let finished = false;
    // a second idle worker would receive the message if its ack deadline lapsed
    bus.subscribe(
      'mint',
      async (msg) => {
        deliveries.push(msg.deliveryCount);
        if (deliveries.length > 1) {
          await msg.ack();
          return;
        }
        const end = Date.now() + 2_500;
        while (Date.now() < end) {
          await sleep(400);
          msg.working();
        }
        finished = true;
        await msg.ack();
      },
      { concurrency: 2 },
    );
    await bus.publish(job());
    await until(() => finished, 5_000, 'long handler finished');
    await sleep(1_200);
    expect(deliveries).toEqual([1]);
  });

  it('terms an undecodable message and reports it', async () => {
    const { bus, subjectPrefix, storedMessages } = await setup();
    const errors: unknown[] = [];
    let calls = 0;
    bus.subscribe(
      'mint',
      async (msg) => {
        calls += 1;
        await msg.ack();
      },
      { onError: (error) => errors.push(error) },
    );
    await admin?.jsm.jetstream().publish(`${subjectPrefix}.jobs.mint`, 'not json');
    await until(() => errors.length === 1);
    expect(calls).toBe(0);
    await until(async () => (await storedMessages()) === 0, 2_000, 'stream empty after term');
  });

  it('reaches an existing stream and keeps its messages when connecting again', async () => {
    const first = await setup({ ackWaitMs: 5_000 });
    await first.bus.publish(job());
    // a second process with a different ack wait updates the consumer in place
    const second = await connectJetStreamBus({
      url: testInfra().natsUrl,
      stream: first.stream,
      subjectPrefix: first.subjectPrefix,
      ackWaitMs: 7_000,
    });
    try {
      expect(await second.pending('mint')).toBe(1);
      const consumer = await admin?.jsm.consumers.info(first.stream, `${first.stream}_mint`);
      expect(consumer?.config.ack_wait).toBe(7_000_000_000);
      await second.ping();
    } finally {
      await second.close();
    }
  });
});

describe('connectJetStreamBus across a nats-server crash', () => {
  let server: NatsServer | undefined;

  beforeAll(async () => {
    server = await startNatsServer();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('keeps consuming after the server is killed and restarted', { timeout: 25_000 }, async () => {
    if (!server) throw new Error('no server');
    const bus = await connectJetStreamBus({ url: server.url, ...freshStreamNames(), requestTimeoutMs: 2_000 });
    cleanups.push(() => bus.close());
    const consumed: JobRef[] = [];
    const errors: unknown[] = [];
    bus.subscribe(
      'mint',
      async (msg) => {
        consumed.push(msg.job);
        await msg.ack();
      },
      { onError: (error) => errors.push(error) },
    );
    const before = job();
    const stored = job('import'); // nobody consumes imports until after the restart
    await bus.publish(before);
    await bus.publish(stored);
    await until(() => consumed.length === 1, 5_000, 'first job consumed');

    await server.kill('SIGKILL');
    await until(async () => isJobBusError(await bus.ping().catch((error: unknown) => error)), 5_000, 'ping rejects');
    expect(isJobBusError(await bus.publish(job()).catch((error: unknown) => error))).toBe(true);

    await server.restart();
    const after = job();
    // what the outbox relay does: retry until the bus accepts it
    await until(
      () =>
        bus.publish(after).then(
          () => true,
          () => false,
        ),
      10_000,
      'publish accepted after restart',
    );
    await until(() => consumed.length === 2, 5_000, 'second job consumed');
    expect(consumed).toEqual([before, after]);

    const imported: JobRef[] = [];
    bus.subscribe('import', async (msg) => {
      imported.push(msg.job);
      await msg.ack();
    });
    await until(() => imported.length === 1, 5_000, 'job stored before the crash consumed');
    expect(imported).toEqual([stored]);
  });
});
