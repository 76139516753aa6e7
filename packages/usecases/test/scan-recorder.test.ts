import type { ScanRecord } from '@mint/db';
import { createScanRecorder, type UseCaseContext } from '@mint/usecases';
import { describe, expect, it } from 'vitest';

/** The recorder only touches the context for its default writer; these tests inject one. */
const noContext = {} as UseCaseContext;
const scan = (i: number): ScanRecord => ({
  brandId: '11111111-1111-4111-8111-111111111111',
  scannedAt: new Date(0),
  kind: 'serial',
  gtin: null,
  identifier: `S${i}`,
  outcome: 'resolved',
  representation: 'redirect',
});
const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('createScanRecorder', () => {
  it('writes queued scans in batches of at most batchSize, in order', async () => {
    const batches: string[][] = [];
    const recorder = createScanRecorder(noContext, { write: async (s) => void batches.push(s.map((x) => x.identifier!)), batchSize: 3, flushIntervalMs: 5 });
    for (let i = 0; i < 7; i++) recorder.record(scan(i));
    await until(() => recorder.stats().written === 7);
    expect(batches.flat()).toEqual(['S0', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6']);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(3);
    expect(recorder.stats()).toEqual({ written: 7, spilled: 0, dropped: 0, failed: 0, queued: 0 });
    await recorder.close();
  });

  it('sends scans that arrive during a write as a full batch or on the timer, never as a batch of the few that came in meanwhile', async () => {
    const batches: number[] = [];
    let release = () => {};
    const recorder = createScanRecorder(noContext, {
      write: (s) => {
        batches.push(s.length);
        return batches.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
      batchSize: 4,
      flushIntervalMs: 200,
    });
    for (let i = 0; i < 4; i++) recorder.record(scan(i));
    expect(batches).toEqual([4]);
    // Two arrive while the first batch is with the database.
    recorder.record(scan(4));
    recorder.record(scan(5));
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toEqual([4]);
    expect(recorder.stats()).toMatchObject({ written: 4, queued: 2 });
    // Two more fill a batch, which goes at once; then a lone one waits for the timer.
    recorder.record(scan(6));
    recorder.record(scan(7));
    recorder.record(scan(8));
    await until(() => batches.length === 2);
    expect(batches).toEqual([4, 4]);
    await until(() => recorder.stats().written === 9);
    expect(batches).toEqual([4, 4, 1]);
    await recorder.close();
  });

  it('drops and counts scans beyond its capacity while the writer hangs, without record() ever waiting or throwing', async () => {
    const recorder = createScanRecorder(noContext, { write: () => new Promise(() => {}), batchSize: 2, capacity: 5, flushIntervalMs: 1 });
    for (let i = 0; i < 50; i++) expect(recorder.record(scan(i))).toBeUndefined();
    // Two are with the hung writer, five wait in the queue, the rest were dropped.
    expect(recorder.stats()).toEqual({ written: 0, spilled: 0, dropped: 43, failed: 0, queued: 5 });
    await recorder.close(20);
  });

  it('counts the scans of a failed write as failed and goes on with the next batch', async () => {
    let calls = 0;
    const errors: number[] = [];
    const recorder = createScanRecorder(noContext, {
      write: async () => {
        if (calls++ === 0) throw new Error('database down');
      },
      batchSize: 2,
      flushIntervalMs: 1,
      onError: (_e, lost) => errors.push(lost),
    });
    for (let i = 0; i < 4; i++) recorder.record(scan(i));
    await until(() => recorder.stats().written + recorder.stats().failed === 4);
    expect(recorder.stats()).toMatchObject({ written: 2, failed: 2 });
    expect(errors).toEqual([2]);
    await recorder.close();
  });

  it('flushes what is queued on close', async () => {
    const written: number[] = [];
    const recorder = createScanRecorder(noContext, { write: async (s) => void written.push(s.length), flushIntervalMs: 60_000 });
    recorder.record(scan(1));
    recorder.record(scan(2));
    await recorder.close();
    expect(written).toEqual([2]);
    recorder.record(scan(3));
    expect(recorder.stats().dropped).toBe(1);
  });
});
