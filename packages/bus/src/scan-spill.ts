import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { ConsumerMessages, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { JobBusError } from './errors.ts';
import { isMissingResource } from './jetstream-topology.ts';

/**
 * Where scans go while their database cannot take them: a JetStream work queue of batches, each
 * stored on file and kept until a replay writes it and acks it.
 */
export interface ScanSpill {
  /**
   * Stores one batch (`body`, opaque bytes) under `key`; resolves once the server confirmed it
   * stored the batch. A batch published again with the same key within the duplicate window is
   * stored once. Rejects with a JobBusError when the server did not confirm.
   */
  publish(key: string, body: Uint8Array): Promise<void>;
  /**
   * Hands the stored batches to `handler` one at a time, oldest first: it resolves true once the
   * batch is written (the batch is acked and gone), false to have it again after `retryDelayMs`
   * (it throws: the same). Several processes may replay at once: each batch goes to one of them
   * at a time, and again to another when one dies before its ack (handlers must be idempotent).
   */
  replay(handler: (key: string, body: Uint8Array) => Promise<boolean>, options?: ScanReplayOptions): ScanReplay;
  /** Batches stored and not yet acked (for metrics and tests). */
  pending(): Promise<number>;
  /** Stops every replay (waiting for the batch in hand), then closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link ScanSpill.replay}. */
export interface ScanReplayOptions {
  /** Delay before a batch whose handler said false (or threw) comes again; default 1,000 ms. */
  readonly retryDelayMs?: number;
  /** Told about a handler that threw and about transport errors; the replay goes on. */
  readonly onError?: (error: unknown) => void;
}

/** A running replay. */
export interface ScanReplay {
  /** Stops taking batches; resolves once the batch in hand is settled. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link connectScanSpill}. */
export interface ScanSpillOptions {
  /** NATS server URL(s), comma separated. */
  readonly url: string;
  /** The job stream's name: the spill's stream is `{stream}_SCANS`. */
  readonly stream: string;
  /** Subject prefix: the spill's subject is `{subjectPrefix}.scans.spilled`. */
  readonly subjectPrefix: string;
  /** Replicas of the stream and its consumer; default 1. */
  readonly replicas?: number;
  /** Timeout of publish and management requests; default 5,000 ms. */
  readonly requestTimeoutMs?: number;
  /** Connection name shown in the server's monitoring pages. */
  readonly name?: string;
}

/** How long a spilled batch's key is remembered for deduplication. */
const duplicateWindowMs = 120_000;
/** How long a replaying process may hold a batch before it goes to another. */
const ackWaitMs = 30_000;

/**
 * Connects to NATS and ensures the spill's work-queue stream (`{stream}_SCANS`, file storage) and
 * its one durable pull consumer (`replay`, explicit acks, redelivered without limit: a batch is
 * never dropped for having waited through a long outage). The client reconnects forever after
 * start; publish rejects while the server is away.
 */
export async function connectScanSpill(options: ScanSpillOptions): Promise<ScanSpill> {
  const stream = `${options.stream}_SCANS`;
  const subject = `${options.subjectPrefix}.scans.spilled`;
  const timeout = options.requestTimeoutMs ?? 5_000;
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: options.url.split(',').map((url) => url.trim()),
      ...(options.name === undefined ? {} : { name: options.name }),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      pingInterval: 10_000,
      maxPingOut: 3,
      timeout,
    });
  } catch (cause) {
    throw new JobBusError(`connecting to NATS at ${options.url} failed`, { cause });
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout });
    await ensureSpillStream(jsm, stream, subject, options.replicas ?? 1);
    return new JetStreamScanSpill(nc, jsm, jetstream(nc, { timeout }), stream, subject);
  } catch (cause) {
    await nc.close().catch(() => undefined);
    throw cause instanceof JobBusError ? cause : new JobBusError('setting up the scan spill stream failed', { cause });
  }
}

async function ensureSpillStream(jsm: JetStreamManager, stream: string, subject: string, replicas: number): Promise<void> {
  try {
    await jsm.streams.info(stream);
  } catch (cause) {
    if (!isMissingResource(cause)) throw new JobBusError(`reading stream ${stream} failed`, { cause });
    try {
      await jsm.streams.add({
        name: stream,
        subjects: [subject],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window: duplicateWindowMs * 1_000_000,
        num_replicas: replicas,
      });
    } catch (added) {
      // Another process may have created it meanwhile.
      await jsm.streams.info(stream).catch(() => {
        throw new JobBusError(`creating stream ${stream} failed`, { cause: added });
      });
    }
  }
  try {
    await jsm.consumers.info(stream, 'replay');
  } catch (cause) {
    if (!isMissingResource(cause)) throw new JobBusError(`reading consumer replay on stream ${stream} failed`, { cause });
    await jsm.consumers
      .add(stream, {
        durable_name: 'replay',
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ackWaitMs * 1_000_000,
        max_deliver: -1,
        num_replicas: replicas,
      })
      .catch(async (added: unknown) => {
        await jsm.consumers.info(stream, 'replay').catch(() => {
          throw new JobBusError(`creating consumer replay on stream ${stream} failed`, { cause: added });
        });
      });
  }
}

class JetStreamScanSpill implements ScanSpill {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #js: JetStreamClient;
  readonly #stream: string;
  readonly #subject: string;
  readonly #replays = new Set<ScanReplay>();
  #closing: Promise<void> | undefined;

  constructor(nc: NatsConnection, jsm: JetStreamManager, js: JetStreamClient, stream: string, subject: string) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.#js = js;
    this.#stream = stream;
    this.#subject = subject;
  }

  async publish(key: string, body: Uint8Array): Promise<void> {
    if (this.#closing !== undefined || this.#nc.isClosed()) throw new JobBusError('the scan spill is closed');
    const h = headers();
    h.set('Nats-Msg-Id', key);
    h.set('Scan-Batch-Key', key);
    try {
      await this.#js.publish(this.#subject, body, { headers: h, msgID: key });
    } catch (cause) {
      throw new JobBusError(`spilling scan batch ${key} failed`, { cause });
    }
  }

  replay(handler: (key: string, body: Uint8Array) => Promise<boolean>, options: ScanReplayOptions = {}): ScanReplay {
    const retryDelayMs = options.retryDelayMs ?? 1_000;
    let stopped = false;
    let messages: ConsumerMessages | undefined;
    const run = (async () => {
      while (!stopped && !this.#nc.isClosed()) {
        try {
          const consumer = await this.#js.consumers.get(this.#stream, 'replay');
          messages = await consumer.consume({ max_messages: 4 });
          if (stopped) messages.stop();
          for await (const msg of messages) {
            let written = false;
            try {
              written = await handler(msg.headers?.get('Scan-Batch-Key') ?? `seq:${msg.seq}`, msg.data);
            } catch (error) {
              options.onError?.(error);
            }
            if (written) await msg.ackAck().catch((error: unknown) => options.onError?.(error));
            else msg.nak(retryDelayMs);
            if (stopped) break;
          }
        } catch (error) {
          if (!stopped) options.onError?.(error);
        }
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
      }
    })();
    const replay: ScanReplay = {
      stop: async () => {
        stopped = true;
        messages?.stop();
        await run;
        this.#replays.delete(replay);
      },
    };
    this.#replays.add(replay);
    return replay;
  }

  async pending(): Promise<number> {
    const info = await this.#jsm.consumers.info(this.#stream, 'replay');
    return info.num_pending + info.num_ack_pending;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([...this.#replays].map((r) => r.stop()));
      await this.#nc.drain().catch(() => this.#nc.close());
    })();
    return this.#closing;
  }
}
