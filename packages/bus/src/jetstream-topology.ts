import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { ConsumerInfo, JetStreamManager, StreamInfo } from '@nats-io/jetstream';
import { NoRespondersError, TimeoutError } from '@nats-io/transport-node';
import { JobBusError } from './errors.ts';
import { JOB_KINDS } from './job-bus.ts';
import type { JobKind } from './job-bus.ts';

/** Where the jobs live on the server: one stream, one subject and one durable per kind. */
export interface JetStreamTopology {
  /** Stream name, e.g. MINT_JOBS. */
  readonly stream: string;
  /** Subject per kind: `${subjectPrefix}.jobs.${kind}`. */
  readonly subjects: Readonly<Record<JobKind, string>>;
  /** Durable pull consumer per kind: `${stream}_${kind}`. */
  readonly durables: Readonly<Record<JobKind, string>>;
  /** Ack deadline of each consumer, renewed by `working()`. */
  readonly ackWaitMs: number;
  /** Deliveries per message, counting the first. */
  readonly maxDeliver: number;
  /** How long a published job id is remembered for deduplication. */
  readonly duplicateWindowMs: number;
  /** Replicas of the stream and of each consumer (1 on a single server; 3 or 5 in a cluster). */
  readonly replicas: number;
}

/** Derives subjects and durable names from the stream name and subject prefix. */
export function jetStreamTopology(options: {
  stream: string;
  subjectPrefix: string;
  ackWaitMs: number;
  maxDeliver: number;
  duplicateWindowMs: number;
  replicas?: number;
}): JetStreamTopology {
  const subjects = {} as Record<JobKind, string>;
  const durables = {} as Record<JobKind, string>;
  for (const kind of JOB_KINDS) {
    subjects[kind] = `${options.subjectPrefix}.jobs.${kind}`;
    durables[kind] = `${options.stream}_${kind}`;
  }
  return {
    stream: options.stream,
    subjects,
    durables,
    ackWaitMs: options.ackWaitMs,
    maxDeliver: options.maxDeliver,
    duplicateWindowMs: options.duplicateWindowMs,
    replicas: options.replicas ?? 1,
  };
}

/**
 * Creates the work-queue stream and the per-kind durable consumers, or updates them
 * when their subjects, duplicate window, replicas, ack wait, max deliver or filter differ.
 * Safe to run from every process at start, and retried whole while the cluster does not answer.
 * Throws a JobBusError when a same-named stream or consumer exists with a retention, storage or
 * ack policy it cannot change.
 */
export async function ensureJetStreamTopology(jsm: JetStreamManager, topology: JetStreamTopology): Promise<void> {
  const deadline = Date.now() + TRANSIENT_RETRY_MS;
  for (;;) {
    try {
      await ensureStream(jsm, topology);
      for (const kind of JOB_KINDS) {
        await ensureConsumer(jsm, topology, kind);
      }
      return;
    } catch (error) {
      if (!isTransient(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * How long setup keeps retrying requests that timed out, found no responder or were told JetStream is
 * temporarily unavailable: what a cluster electing a leader (just started, a node restarting, a stream
 * just created, a replica count raised) answers meanwhile.
 */
const TRANSIENT_RETRY_MS = 30_000;

function isTransient(error: unknown): boolean {
  const cause = error instanceof JobBusError ? error.cause : error;
  // 503 with JetStream's own error code (10008, "JetStream system temporarily unavailable"): the
  // cluster is electing a stream's or a consumer's leader, as after a replica count was raised.
  return cause instanceof TimeoutError || cause instanceof NoRespondersError || (cause instanceof JetStreamApiError && cause.status === 503);
}

/** True when a JetStream API call failed because the stream or consumer does not exist. */
export function isMissingResource(error: unknown): boolean {
  return error instanceof JetStreamApiError && (error.code === JetStreamApiCodes.StreamNotFound || error.code === JetStreamApiCodes.ConsumerNotFound);
}

async function ensureStream(jsm: JetStreamManager, topology: JetStreamTopology): Promise<void> {
  const { stream } = topology;
  const subjects = JOB_KINDS.map((kind) => topology.subjects[kind]);
  const duplicateWindow = toNanos(topology.duplicateWindowMs);
  let info = await streamInfo(jsm, stream);
  if (!info) {
    try {
      await jsm.streams.add({
        name: stream,
        subjects,
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window: duplicateWindow,
        num_replicas: topology.replicas,
      });
    } catch (cause) {
      // another process may have created it meanwhile; compare with what exists
      info = await streamInfo(jsm, stream);
      if (!info) throw new JobBusError(`creating stream ${stream} failed`, { cause });
    }
    if (!info) {
      // a new replicated stream answers its consumers' requests only once its group has a leader
      if (topology.replicas > 1) await awaitReplicas(jsm, stream, topology.replicas);
      return;
    }
  }
  const { config } = info;
  if (config.retention !== RetentionPolicy.Workqueue || config.storage !== StorageType.File) {
    throw new JobBusError(
      `stream ${stream} exists with retention ${config.retention} and storage ${config.storage}; ` +
        'the job bus needs a workqueue stream on file storage (delete it or choose another stream name)',
    );
  }
  const missing = subjects.filter((subject) => !config.subjects.includes(subject));
  if (missing.length > 0 || config.duplicate_window !== duplicateWindow || config.num_replicas !== topology.replicas) {
    try {
      await jsm.streams.update(stream, {
        subjects: [...config.subjects, ...missing],
        duplicate_window: duplicateWindow,
        num_replicas: topology.replicas,
      });
    } catch (cause) {
      throw new JobBusError(`updating stream ${stream} failed`, { cause });
    }
    if (config.num_replicas !== topology.replicas) await awaitReplicas(jsm, stream, topology.replicas);
  }
}

/**
 * After creating a replicated stream or changing its replica count, waits (up to 30 s) until its
 * peers are placed and current: until then the stream's and its consumers' API requests may time out.
 */
async function awaitReplicas(jsm: JetStreamManager, stream: string, replicas: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const info = await jsm.streams.info(stream).catch(() => undefined);
    const peers = info?.cluster?.replicas ?? [];
    if (info?.cluster?.leader !== undefined && peers.length >= replicas - 1 && peers.every((p) => p.current)) return;
    if (Date.now() > deadline) throw new JobBusError(`stream ${stream} did not reach ${replicas} current replicas within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function ensureConsumer(jsm: JetStreamManager, topology: JetStreamTopology, kind: JobKind): Promise<void> {
  const { stream } = topology;
  const durable = topology.durables[kind];
  const wanted = {
    filter_subject: topology.subjects[kind],
    ack_wait: toNanos(topology.ackWaitMs),
    max_deliver: topology.maxDeliver,
    num_replicas: topology.replicas,
  };
  let info = await consumerInfo(jsm, stream, durable);
  if (!info) {
    try {
      await jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...wanted,
      });
      return;
    } catch (cause) {
      info = await consumerInfo(jsm, stream, durable);
      if (!info) throw new JobBusError(`creating consumer ${durable} on stream ${stream} failed`, { cause });
    }
  }
  const { config } = info;
  if (config.ack_policy !== AckPolicy.Explicit || config.deliver_subject) {
    throw new JobBusError(`consumer ${durable} on stream ${stream} exists but is not an explicit-ack pull consumer; delete it`);
  }
  if (
    config.filter_subject !== wanted.filter_subject ||
    config.ack_wait !== wanted.ack_wait ||
    config.max_deliver !== wanted.max_deliver ||
    // 0 (unset) follows the stream, which was just given the wanted count
    (config.num_replicas || wanted.num_replicas) !== wanted.num_replicas
  ) {
    try {
      await jsm.consumers.update(stream, durable, wanted);
    } catch (cause) {
      throw new JobBusError(`updating consumer ${durable} on stream ${stream} failed`, { cause });
    }
  }
}

async function streamInfo(jsm: JetStreamManager, stream: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(stream);
  } catch (cause) {
    if (isMissingResource(cause)) return undefined;
    throw new JobBusError(`reading stream ${stream} failed`, { cause });
  }
}

async function consumerInfo(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (cause) {
    if (isMissingResource(cause)) return undefined;
    throw new JobBusError(`reading consumer ${durable} on stream ${stream} failed`, { cause });
  }
}

function toNanos(ms: number): number {
  return Math.round(ms * 1_000_000);
}
