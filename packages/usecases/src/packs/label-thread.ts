/**
 * Label files are drawn on a worker thread: encoding a QR code or a DataMatrix and laying out PDF
 * pages takes milliseconds a label, and a 100,000-label file drawn on the event loop would hold
 * up the lease renewals of the pack (another executor would take it over) and every other piece
 * of work of the process. The generator reads the units and posts them in batches; the thread
 * posts the file's bytes back; the generator hashes and stores them. One batch is in flight at a
 * time and its bytes are written before the next is posted, so memory holds one batch's output.
 */

import { Worker } from 'node:worker_threads';
import type { LabelFileSpec, NamedLabel } from './label-files.ts';

/** Units posted to the thread at a time. */
export const labelBatchSize = 500;

/** Messages to the label thread. */
export type ToLabelThread = { readonly type: 'add'; readonly units: readonly NamedLabel[] } | { readonly type: 'end' };
/** Messages from the label thread, in this order: chunks, then `added` per batch; chunks, then `ended` (or `error` at any point). */
export type FromLabelThread =
  | { readonly type: 'chunk'; readonly bytes: Uint8Array }
  | { readonly type: 'added' }
  | { readonly type: 'ended'; readonly labels: number }
  | { readonly type: 'error'; readonly message: string };

/**
 * Draws the label file of `spec` for `units` on a worker thread, handing its bytes in order to
 * `write` (awaited before the next batch goes); resolves with the labels drawn. A drawing error
 * (a layout that fits no label, a bad unit) rejects with its message; the thread always ends.
 */
export async function drawLabelFile(spec: LabelFileSpec, units: AsyncIterable<NamedLabel>, write: (chunk: Buffer) => Promise<void>): Promise<number> {
  const worker = new Worker(new URL('./label-worker.ts', import.meta.url), { workerData: spec });
  const inbox: FromLabelThread[] = [];
  let waiting: ((message: FromLabelThread) => void) | null = null;
  const deliver = (message: FromLabelThread) => {
    if (waiting === null) inbox.push(message);
    else {
      const take = waiting;
      waiting = null;
      take(message);
    }
  };
  worker.on('message', deliver);
  worker.on('error', (error) => deliver({ type: 'error', message: error.message }));
  worker.on('exit', (code) => deliver({ type: 'error', message: `the label thread exited (code ${code})` }));
  const next = () => (inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise<FromLabelThread>((resolve) => (waiting = resolve)));
  /** Writes the chunks until `until` arrives; throws on an error. */
  const drain = async <T extends FromLabelThread['type']>(until: T): Promise<Extract<FromLabelThread, { type: T }>> => {
    for (;;) {
      const message = await next();
      if (message.type === 'chunk') await write(Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength));
      else if (message.type === 'error') throw new Error(message.message);
      else if (message.type === until) return message as Extract<FromLabelThread, { type: T }>;
    }
  };
  try {
    let batch: NamedLabel[] = [];
    const send = async () => {
      worker.postMessage({ type: 'add', units: batch } satisfies ToLabelThread);
      batch = [];
      await drain('added');
    };
    for await (const unit of units) {
      batch.push(unit);
      if (batch.length === labelBatchSize) await send();
    }
    if (batch.length > 0) await send();
    worker.postMessage({ type: 'end' } satisfies ToLabelThread);
    return (await drain('ended')).labels;
  } finally {
    worker.removeAllListeners('exit');
    await worker.terminate();
  }
}
