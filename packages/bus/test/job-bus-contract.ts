// The behaviour every JobBus promises, written once and run against each implementation:
// memory-bus.test.ts runs it on the in-process bus, jetstream-bus.test.ts on a real JetStream
// bus. Only the timings differ; each file keeps the tests that are specific to its bus.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isInvalidJobError, isJobBusError, isUnsettledJobError } from '../src/errors.ts';
import type { JobBus, JobKind, JobMessage, JobRef } from '../src/job-bus.ts';

/** A bus opened for one test; the factory closes it (and cleans up) after the test. */
export interface ContractBus {
  readonly bus: JobBus;
  /** Messages the bus still stores, where it can tell: acked and termed ones are gone. */
  readonly storedMessages?: () => Promise<number>;
}

/** What a test asks of the bus it opens; a bus without the notion ignores the option. */
export interface ContractBusOptions {
  readonly maxDeliver?: number;
  readonly ackWaitMs?: number;
}

/** The waits of one implementation. */
export interface ContractTiming {
  /** Silence after which no further delivery is expected. */
  readonly quietMs: number;
  /** How long a handler works in the concurrency and stop tests. */
  readonly workMs: number;
  /** Long enough for the ack wait of a bus opened with `ackWaitMs: 1000` to pass. */
  readonly pastAckWaitMs: number;
  /** Longest wait for an expected delivery. */
  readonly timeoutMs: number;
}

/** A job reference with fresh ids. */
export function job(kind: JobKind = 'mint'): JobRef {
  return { kind, id: randomUUID(), brandId: randomUUID() };
}

/** Resolves once `predicate` holds, failing after `timeoutMs`. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Registers the contract's tests for the bus that `open` creates. */
export function jobBusContract(open: (options?: ContractBusOptions) => Promise<ContractBus>, timing: ContractTiming): void {
  const { quietMs, workMs, timeoutMs } = timing;
  const waitFor = (predicate: () => boolean | Promise<boolean>, what?: string) => until(predicate, timeoutMs, what);
  const expectStored = async (t: ContractBus, count: number) => {
    const stored = t.storedMessages;
    if (stored) await waitFor(async () => (await stored()) === count, `${count} messages stored`);
  };

  describe('the JobBus contract', () => {
    it("delivers an announced job once, the publish of the same job right after it (the outbox relay's) being a duplicate", async () => {
      const t = await open();
      const announced = job();
      const seen: JobMessage[] = [];
      t.bus.subscribe('mint', async (msg) => {
        seen.push(msg);
        await msg.ack();
      });
      t.bus.announce(announced);
      await t.bus.publish(announced);
      await waitFor(() => seen.length === 1);
      await sleep(quietMs);
      expect(seen.map((m) => m.job)).toEqual([announced]);
      // A malformed ref is dropped without an exception.
      expect(() => t.bus.announce({ kind: 'mint', id: 'not-a-uuid', brandId: announced.brandId })).not.toThrow();
    });

    it('delivers a published job once, as its first delivery, and forgets it after ack', async () => {
      const t = await open();
      const published = job();
      const seen: JobMessage[] = [];
      t.bus.subscribe('mint', async (msg) => {
        seen.push(msg);
        await msg.ack();
      });
      await t.bus.publish(published);
      await waitFor(() => seen.length === 1);
      await sleep(quietMs);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.job).toEqual(published);
      expect(seen[0]?.deliveryCount).toBe(1);
      expect(seen[0]?.lastDelivery).toBe(false);
      await expectStored(t, 0);
    });

    it('routes each kind to its own subscribers only', async () => {
      const { bus } = await open();
      const mints: JobRef[] = [];
      const imports: JobRef[] = [];
      bus.subscribe('import', async (msg) => {
        imports.push(msg.job);
        await msg.ack();
      });
      const mintJob = job('mint');
      const importJob = job('import');
      await bus.publish(mintJob);
      await bus.publish(importJob);
      await waitFor(() => imports.length === 1);
      // nobody consumes mint jobs yet: the mint job waits
      expect(await bus.pending('mint')).toBe(1);
      bus.subscribe('mint', async (msg) => {
        mints.push(msg.job);
        await msg.ack();
      });
      await waitFor(() => mints.length === 1);
      expect(mints).toEqual([mintJob]);
      expect(imports).toEqual([importJob]);
    });

    it('drops a duplicate publish while the first is queued or in flight', async () => {
      const { bus } = await open();
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
      await waitFor(() => deliveries.length === 1);
      await bus.publish(published); // in flight: dropped
      release();
      await sleep(quietMs);
      expect(deliveries).toEqual([1]);
    });

    it('counts only never-delivered messages as pending', async () => {
      const { bus } = await open();
      await bus.publish(job());
      await bus.publish(job());
      await bus.publish(job('import'));
      expect(await bus.pending('mint')).toBe(2);
      expect(await bus.pending('import')).toBe(1);
    });

    it('redelivers a nakked message after the delay with a higher delivery count', async () => {
      const { bus } = await open();
      const deliveries: Array<{ count: number; at: number }> = [];
      bus.subscribe('mint', async (msg) => {
        deliveries.push({ count: msg.deliveryCount, at: Date.now() });
        if (msg.deliveryCount === 1) msg.nak(300);
        else await msg.ack();
      });
      await bus.publish(job());
      await waitFor(() => deliveries.length === 2);
      expect(deliveries.map((d) => d.count)).toEqual([1, 2]);
      expect((deliveries[1]?.at ?? 0) - (deliveries[0]?.at ?? 0)).toBeGreaterThanOrEqual(250);
    });

    it('never redelivers a termed message, not even after the ack wait', async () => {
      const t = await open({ ackWaitMs: 1_000 });
      let calls = 0;
      t.bus.subscribe('mint', async (msg) => {
        calls += 1;
        msg.term();
      });
      await t.bus.publish(job());
      await waitFor(() => calls === 1);
      await sleep(timing.pastAckWaitMs);
      expect(calls).toBe(1);
      await expectStored(t, 0);
    });

    it('marks the maxDeliver-th delivery as the last and drops the message after a nak there', async () => {
      const t = await open({ maxDeliver: 3 });
      const seen: Array<[number, boolean]> = [];
      t.bus.subscribe('mint', async (msg) => {
        seen.push([msg.deliveryCount, msg.lastDelivery]);
        msg.nak();
      });
      await t.bus.publish(job());
      await waitFor(() => seen.length === 3);
      await sleep(quietMs);
      expect(seen).toEqual([
        [1, false],
        [2, false],
        [3, true],
      ]);
      await expectStored(t, 0);
    });

    it('naks a handler that throws or returns unsettled with the retry delay, and reports each with its job', async () => {
      const { bus } = await open();
      const errors: Array<[unknown, JobRef | undefined]> = [];
      const counts: number[] = [];
      const published = job();
      bus.subscribe(
        'mint',
        async (msg) => {
          counts.push(msg.deliveryCount);
          if (msg.deliveryCount === 1) throw new Error('boom');
          if (msg.deliveryCount === 2) return; // forgot to settle
          await msg.ack();
        },
        { retryDelayMs: 100, onError: (error, ref) => errors.push([error, ref]) },
      );
      await bus.publish(published);
      await waitFor(() => counts.length === 3);
      await sleep(quietMs);
      expect(counts).toEqual([1, 2, 3]);
      expect(errors).toHaveLength(2);
      expect(errors[0]).toEqual([new Error('boom'), published]);
      expect(isUnsettledJobError(errors[1]?.[0])).toBe(true);
      expect(errors[1]?.[1]).toEqual(published);
    });

    it('ignores every settle call after the first', async () => {
      const t = await open();
      let calls = 0;
      t.bus.subscribe('mint', async (msg) => {
        calls += 1;
        await msg.ack();
        msg.nak();
        msg.term();
      });
      await t.bus.publish(job());
      await waitFor(() => calls === 1);
      await sleep(quietMs);
      expect(calls).toBe(1);
      await expectStored(t, 0);
    });

    it('runs at most `concurrency` handlers at once', async () => {
      const { bus } = await open();
      let running = 0;
      let peak = 0;
      let done = 0;
      bus.subscribe(
        'mint',
        async (msg) => {
          running += 1;
          peak = Math.max(peak, running);
          await sleep(workMs);
          running -= 1;
          done += 1;
          await msg.ack();
        },
        { concurrency: 2 },
      );
      for (let i = 0; i < 5; i += 1) await bus.publish(job());
      await waitFor(() => done === 5);
      expect(peak).toBe(2);
    });

    it('stop() resolves only after in-flight handlers returned, and delivers nothing afterwards', async () => {
      const { bus } = await open();
      let finished = false;
      let calls = 0;
      const subscription = bus.subscribe('mint', async (msg) => {
        calls += 1;
        await sleep(workMs);
        finished = true;
        await msg.ack();
      });
      await bus.publish(job());
      await waitFor(() => calls === 1);
      await subscription.stop();
      expect(finished).toBe(true);
      await bus.publish(job());
      await sleep(quietMs);
      expect(calls).toBe(1);
      expect(await bus.pending('mint')).toBe(1);
    });

    it('rejects a malformed job naming the field', async () => {
      const { bus } = await open();
      const error: unknown = await bus.publish({ kind: 'mint', id: 'not-a-uuid', brandId: randomUUID() }).catch((e: unknown) => e);
      expect(isInvalidJobError(error) && error.field).toBe('id');
      const kindError: unknown = await bus.publish({ kind: 'other' as JobKind, id: randomUUID(), brandId: randomUUID() }).catch((e: unknown) => e);
      expect(isInvalidJobError(kindError) && kindError.field).toBe('kind');
    });

    it('rejects publish and ping after close', async () => {
      const { bus } = await open();
      await bus.close();
      expect(isJobBusError(await bus.publish(job()).catch((e: unknown) => e))).toBe(true);
      expect(isJobBusError(await bus.ping().catch((e: unknown) => e))).toBe(true);
    });
  });
}
