import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { isInvalidJobError, isJobBusError, isUnsettledJobError } from './errors.ts';
import type { JobBus, JobKind, JobMessage, JobRef } from './job-bus.ts';
import { createMemoryBus } from './memory-bus.ts';

const buses: JobBus[] = [];

function setup(options?: { maxDeliver?: number }): JobBus {
  const bus = createMemoryBus(options);
  buses.push(bus);
  return bus;
}

afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

function job(kind: JobKind = 'mint'): JobRef {
  return { kind, id: randomUUID(), brandId: randomUUID() };
}

/** Resolves once `predicate` holds, failing the test after `timeoutMs`. */
async function until(predicate: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('createMemoryBus', () => {
  it('delivers a published job once and forgets it after ack', async () => {
    const bus = setup();
    const published = job();
    const seen: JobMessage[] = [];
    bus.subscribe('mint', async (msg) => {
      seen.push(msg);
      await msg.ack();
    });
    await bus.publish(published);
    await until(() => seen.length === 1);
    await sleep(30);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.job).toEqual(published);
    expect(seen[0]?.deliveryCount).toBe(1);
    expect(seen[0]?.lastDelivery).toBe(false);
  });

  it('routes each kind to its own subscribers only', async () => {
    const bus = setup();
    const mints: JobRef[] = [];
    const imports: JobRef[] = [];
    bus.subscribe('mint', async (msg) => {
      mints.push(msg.job);
      await msg.ack();
    });
    bus.subscribe('import', async (msg) => {
      imports.push(msg.job);
      await msg.ack();
    });
    const mintJob = job('mint');
    const importJob = job('import');
    await bus.publish(mintJob);
    await bus.publish(importJob);
    await until(() => mints.length + imports.length === 2);
    expect(mints).toEqual([mintJob]);
    expect(imports).toEqual([importJob]);
  });

  it('drops a duplicate publish while the first is queued or in flight, accepts it after ack', async () => {
    const bus = setup();
    const published = job();
    await bus.publish(published);
    await bus.publish({ ...published });
    expect(await bus.pending('mint')).toBe(1);

    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const deliveries: number[] = [];
    bus.subscribe('mint', async (msg) => {
      deliveries.push(msg.deliveryCount);
      await held;
      await msg.ack();
    });
    await until(() => deliveries.length === 1);
    await bus.publish(published); // in flight: dropped
    release();
    await sleep(30);
    expect(deliveries).toHaveLength(1);

    await bus.publish(published); // acked: a new message
    await until(() => deliveries.length === 2);
  });

  it('counts only never-delivered messages as pending', async () => {
    const bus = setup();
    await bus.publish(job());
    await bus.publish(job());
    await bus.publish(job('import'));
    expect(await bus.pending('mint')).toBe(2);
    expect(await bus.pending('import')).toBe(1);
  });

  it('redelivers a nakked message after the delay with a higher delivery count', async () => {
    const bus = setup();
    const times: number[] = [];
    const counts: number[] = [];
    bus.subscribe('mint', async (msg) => {
      times.push(Date.now());
      counts.push(msg.deliveryCount);
      if (msg.deliveryCount === 1) msg.nak(150);
      else await msg.ack();
    });
    await bus.publish(job());
    await until(() => counts.length === 2);
    expect(counts).toEqual([1, 2]);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(140);
  });

  it('never redelivers a termed message', async () => {
    const bus = setup();
    let calls = 0;
    bus.subscribe('mint', async (msg) => {
      calls += 1;
      msg.term();
    });
    const published = job();
    await bus.publish(published);
    await until(() => calls === 1);
    await sleep(50);
    expect(calls).toBe(1);
    // the id is free again once termed
    await bus.publish(published);
    await until(() => calls === 2);
  });

  it('marks the maxDeliver-th delivery as the last and drops it after a nak', async () => {
    const bus = setup({ maxDeliver: 3 });
    const seen: Array<[number, boolean]> = [];
    bus.subscribe('mint', async (msg) => {
      seen.push([msg.deliveryCount, msg.lastDelivery]);
      msg.nak();
    });
    await bus.publish(job());
    await until(() => seen.length === 3);
    await sleep(50);
    expect(seen).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
  });

  it('naks a handler that throws, after the retry delay, and reports the error', async () => {
    const bus = setup();
    const errors: unknown[] = [];
    const counts: number[] = [];
    const published = job();
    bus.subscribe(
      'mint',
      async (msg) => {
        counts.push(msg.deliveryCount);
        if (msg.deliveryCount === 1) throw new Error('boom');
        await msg.ack();
      },
      { retryDelayMs: 20, onError: (error, ref) => errors.push([error, ref]) },
    );
    await bus.publish(published);
    await until(() => counts.length === 2);
    expect(errors).toEqual([[new Error('boom'), published]]);
  });

  it('naks and reports a handler that returns without settling', async () => {
    const bus = setup();
    const errors: unknown[] = [];
    let calls = 0;
    bus.subscribe(
      'mint',
      async (msg) => {
        calls += 1;
        if (calls === 2) await msg.ack();
      },
      { retryDelayMs: 10, onError: (error) => errors.push(error) },
    );
    await bus.publish(job());
    await until(() => calls === 2);
    expect(errors).toHaveLength(1);
    expect(isUnsettledJobError(errors[0])).toBe(true);
  });

  it('ignores every settle call after the first', async () => {
    const bus = setup();
    let calls = 0;
    bus.subscribe('mint', async (msg) => {
      calls += 1;
      await msg.ack();
      msg.nak();
      msg.term();
    });
    await bus.publish(job());
    await until(() => calls === 1);
    await sleep(50);
    expect(calls).toBe(1);
  });

  it('runs at most `concurrency` handlers at once', async () => {
    const bus = setup();
    let running = 0;
    let peak = 0;
    let done = 0;
    bus.subscribe(
      'mint',
      async (msg) => {
        running += 1;
        peak = Math.max(peak, running);
        await sleep(40);
        running -= 1;
        done += 1;
        await msg.ack();
      },
      { concurrency: 2 },
    );
    for (let i = 0; i < 5; i += 1) await bus.publish(job());
    await until(() => done === 5);
    expect(peak).toBe(2);
  });

  it('stop() waits for in-flight handlers and delivers nothing afterwards', async () => {
    const bus = setup();
    let finished = false;
    let calls = 0;
    const subscription = bus.subscribe('mint', async (msg) => {
      calls += 1;
      await sleep(100);
      finished = true;
      await msg.ack();
    });
    await bus.publish(job());
    await until(() => calls === 1);
    await subscription.stop();
    expect(finished).toBe(true);
    await bus.publish(job());
    await sleep(50);
    expect(calls).toBe(1);
    expect(await bus.pending('mint')).toBe(1);
  });

  it('rejects a malformed job naming the field', async () => {
    const bus = setup();
    const error: unknown = await bus.publish({ kind: 'mint', id: 'not-a-uuid', brandId: randomUUID() }).catch((e) => e);
    expect(isInvalidJobError(error) && error.field).toBe('id');
    const kindError: unknown = await bus
      .publish({ kind: 'other' as JobKind, id: randomUUID(), brandId: randomUUID() })
      .catch((e) => e);
    expect(isInvalidJobError(kindError) && kindError.field).toBe('kind');
  });

  it('rejects publish and ping after close', async () => {
    const bus = setup();
    await bus.close();
    expect(isJobBusError(await bus.publish(job()).catch((e) => e))).toBe(true);
    expect(isJobBusError(await bus.ping().catch((e) => e))).toBe(true);
  });
});
