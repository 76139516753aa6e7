import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobBus } from './job-bus.ts';
import { createMemoryBus } from './memory-bus.ts';
import { job, jobBusContract, until, type ContractBusOptions } from '../test/job-bus-contract.ts';

const buses: JobBus[] = [];

function setup(options?: ContractBusOptions): JobBus {
  const bus = createMemoryBus(options?.maxDeliver === undefined ? {} : { maxDeliver: options.maxDeliver });
  buses.push(bus);
  return bus;
}

afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

describe('createMemoryBus', () => {
  jobBusContract(async (options) => ({ bus: setup(options) }), { quietMs: 50, workMs: 50, pastAckWaitMs: 50, timeoutMs: 2_000 });

  // Unlike JetStream's time window, the in-process bus remembers a job id only while its message lives.
  it('accepts a duplicate publish again once the first was acked', async () => {
    const bus = setup();
    const published = job();
    const deliveries: number[] = [];
    bus.subscribe('mint', async (msg) => {
      deliveries.push(msg.deliveryCount);
      await msg.ack();
    });
    await bus.publish(published);
    await until(() => deliveries.length === 1, 2_000);
    await bus.publish(published); // acked: a new message
    await until(() => deliveries.length === 2, 2_000);
    expect(deliveries).toEqual([1, 1]);
  });

  it('frees the id of a termed message for a new publish', async () => {
    const bus = setup();
    let calls = 0;
    bus.subscribe('mint', async (msg) => {
      calls += 1;
      msg.term();
    });
    const published = job();
    await bus.publish(published);
    await until(() => calls === 1, 2_000);
    await sleep(50);
    expect(calls).toBe(1);
    await bus.publish(published);
    await until(() => calls === 2, 2_000);
  });
});
