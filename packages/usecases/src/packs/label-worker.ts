// The label thread's entry: encodes one label file (label-files.ts) from the batches of units the
// pack generator posts, posting the file's bytes back in order. Protocol in label-thread.ts.

import { parentPort, workerData } from 'node:worker_threads';
import { labelEncoder, type LabelFileSpec, type NamedLabel } from './label-files.ts';
import type { FromLabelThread, ToLabelThread } from './label-thread.ts';

const port = parentPort!;
/** Bytes gathered before they are posted (one message per ~256 KiB, transferred, not copied). */
const postBytes = 256 * 1024;
let gathered: Buffer[] = [];
let size = 0;
const post = (message: FromLabelThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const flush = () => {
  if (size === 0) return;
  const chunk = Buffer.concat(gathered, size);
  gathered = [];
  size = 0;
  const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  post({ type: 'chunk', bytes }, chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? [chunk.buffer as ArrayBuffer] : []);
};
const encoder = labelEncoder(workerData as LabelFileSpec, (chunk) => {
  gathered.push(chunk);
  size += chunk.length;
  if (size >= postBytes) flush();
});

let work = Promise.resolve();
port.on('message', (message: ToLabelThread) => {
  work = work.then(async () => {
    try {
      if (message.type === 'add') {
        await encoder.add(message.units as NamedLabel[]);
        flush();
        post({ type: 'added' });
      } else {
        const labels = await encoder.end();
        flush();
        post({ type: 'ended', labels });
      }
    } catch (error) {
      post({ type: 'error', message: error instanceof Error ? error.message : String(error) });
    }
  });
});
