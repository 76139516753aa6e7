// Administrative calls against the shared NATS server: the JetStream streams a test run named,
// deleted when the run ends. Free of vitest imports so that both the global setup and test files
// use it.

import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { objectStoreStream } from '@mint/store';

/**
 * The prefix of every stream name `freshStreamNames` gives out in the run `runId`, e.g.
 * `T_MIHX2K3L_A1B2C3_`. An Object Store bucket named after such a stream (the executor's
 * `<stream>_PACKS`) lives in the stream `objectStoreStream(bucket)`, which carries the prefix after
 * the object store's own.
 */
export function runStreamPrefix(runId: string): string {
  return `T_${runId.toUpperCase()}_`;
}

/** What the object store puts before a bucket's name to name its stream. */
const bucketPrefix = objectStoreStream('');

/** A stream's name without the object store's prefix: the name tests gave it or its bucket. */
const testName = (stream: string): string => (stream.startsWith(bucketPrefix) ? stream.slice(bucketPrefix.length) : stream);

/**
 * Deletes the streams the run `runId` named (with their consumers and Object Store buckets), and
 * any stream of test names created more than `staleAfterMs` ago (left by a run that was killed or
 * that named its streams otherwise). Another run's recent streams are left alone. Returns the
 * names deleted.
 */
export async function dropTestStreams(natsUrl: string, runId: string, staleAfterMs: number): Promise<string[]> {
  const prefix = runStreamPrefix(runId);
  const nc = await connect({ servers: natsUrl, timeout: 5_000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 10_000 });
    const doomed: string[] = [];
    const now = Date.now();
    for await (const stream of jsm.streams.list()) {
      const name = testName(stream.config.name);
      // Only names tests give out: `T_...` (the run's own start with its prefix).
      if (!name.startsWith('T_')) continue;
      const stale = now - Date.parse(stream.created) > staleAfterMs;
      if (name.startsWith(prefix) || stale) doomed.push(stream.config.name);
    }
    // Deleted one after another: a stream another cleanup deleted first is no error.
    for (const name of doomed) await jsm.streams.delete(name).catch(() => false);
    return doomed;
  } finally {
    await nc.close();
  }
}
