import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Consumer, ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { resolveSubscribeOptions, runDelivery } from './delivery.ts';
import type { ResolvedSubscribeOptions } from './delivery.ts';
import { JobBusError } from './errors.ts';
import { JOB_KINDS } from './job-bus.ts';
import type { JobBus, JobHandler, JobKind, JobRef, JobSubscription, PublishOptions, SubscribeOptions } from './job-bus.ts';
import { decodeJobBody, encodeJobBody, jobDedupeKey, validateJobRef } from './job-ref.ts';
import { allProgressSubject, decodeProgress, encodeProgress, progressSubject } from './progress.ts';
import type { JobProgressUpdate, ProgressHandler } from './progress.ts';
import { ensureJetStreamTopology, isMissingResource, jetStreamTopology } from './jetstream-topology.ts';
import type { JetStreamTopology } from './jetstream-topology.ts';

/** Options for {@link connectJetStreamBus}; every field but `url` has a default. */
export interface JetStreamBusOptions {
  /** NATS server URL(s), comma separated, e.g. `nats://127.0.0.1:4222`. */
  url: string;
  /** Stream name; default `MINT_JOBS`. Tests pass a unique one to stay isolated. */
  stream?: string;
  /** Subject prefix; default `mint`, giving `mint.jobs.mint` and `mint.jobs.import`. */
  subjectPrefix?: string;
  /** Ack deadline per delivery; default 30 000 ms. Handlers call `working()` well within it. */
  ackWaitMs?: number;
  /** Deliveries per message, counting the first; default 10. */
  maxDeliver?: number;
  /** How long a job id is remembered for deduplication; default 120 000 ms. */
  duplicateWindowMs?: number;
  /** Replicas of the stream and its consumers; default 1. A 3-node cluster takes 3. */
  replicas?: number;
  /** Timeout of publish, ack confirmation and management requests; default 5 000 ms. */
  requestTimeoutMs?: number;
  /** Connection name shown in the server's monitoring pages. */
  name?: string;
  /**
   * Delay before pulling again after `failures` consecutive failed pulls (1-based) on a live
   * connection; a reconnect wakes the pull sooner. Default: 1 s every time. The bus holds no
   * backoff formula of its own: the processes pass the domain's retry policy (the bus may not
   * import the domain), so there is one formula in the codebase.
   */
  pullRetryDelayMs?: (failures: number) => number;
}

/** Defaults of {@link JetStreamBusOptions}. */
export const JETSTREAM_BUS_DEFAULTS = {
  stream: 'MINT_JOBS',
  subjectPrefix: 'mint',
  ackWaitMs: 30_000,
  maxDeliver: 10,
  duplicateWindowMs: 120_000,
  requestTimeoutMs: 5_000,
} as const;

// How long one pull request waits on the server; idle heartbeats come at half of it,
// so a dead connection is noticed after about this long even without TCP errors.
const PULL_EXPIRES_MS = 10_000;
const DEFAULT_PULL_RETRY_DELAY_MS = 1_000;

/**
 * Connects to NATS, ensures the work-queue stream and one durable pull consumer per
 * kind, and returns a JobBus over them. Rejects with a JobBusError when the server is
 * unreachable at start; after that the client reconnects forever and subscriptions
 * resume by themselves once the server is back (publish and ping reject meanwhile).
 */
export async function connectJetStreamBus(options: JetStreamBusOptions): Promise<JobBus> {
  const settings = {
    url: options.url,
    name: options.name,
    stream: options.stream ?? JETSTREAM_BUS_DEFAULTS.stream,
    subjectPrefix: options.subjectPrefix ?? JETSTREAM_BUS_DEFAULTS.subjectPrefix,
    ackWaitMs: options.ackWaitMs ?? JETSTREAM_BUS_DEFAULTS.ackWaitMs,
    maxDeliver: options.maxDeliver ?? JETSTREAM_BUS_DEFAULTS.maxDeliver,
    duplicateWindowMs: options.duplicateWindowMs ?? JETSTREAM_BUS_DEFAULTS.duplicateWindowMs,
    replicas: options.replicas ?? 1,
    requestTimeoutMs: options.requestTimeoutMs ?? JETSTREAM_BUS_DEFAULTS.requestTimeoutMs,
    pullRetryDelayMs: options.pullRetryDelayMs ?? (() => DEFAULT_PULL_RETRY_DELAY_MS),
  };
  checkPositiveInteger('ackWaitMs', settings.ackWaitMs);
  checkPositiveInteger('maxDeliver', settings.maxDeliver);
  checkPositiveInteger('duplicateWindowMs', settings.duplicateWindowMs);
  checkPositiveInteger('requestTimeoutMs', settings.requestTimeoutMs);
  checkPositiveInteger('replicas', settings.replicas);
  const topology = jetStreamTopology(settings);

  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: settings.url.split(',').map((url) => url.trim()),
      ...(settings.name === undefined ? {} : { name: settings.name }),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      pingInterval: 10_000,
      maxPingOut: 3,
      timeout: settings.requestTimeoutMs,
    });
  } catch (cause) {
    throw new JobBusError(`connecting to NATS at ${settings.url} failed`, { cause });
  }
  // watch the connection from the start, so a drop during setup is not missed
  const connectivity = new Connectivity(nc);
  try {
    const jsm = await jetstreamManager(nc, { timeout: settings.requestTimeoutMs });
    await ensureJetStreamTopology(jsm, topology);
    const js = jetstream(nc, { timeout: settings.requestTimeoutMs });
    const consumers = new Map<JobKind, Consumer>();
    for (const kind of JOB_KINDS) {
      consumers.set(kind, await js.consumers.get(topology.stream, topology.durables[kind]));
    }
    return new JetStreamBus(nc, jsm, js, topology, consumers, connectivity, settings.requestTimeoutMs, settings.pullRetryDelayMs, settings.subjectPrefix);
  } catch (cause) {
    await nc.close().catch(() => undefined);
    throw cause instanceof JobBusError ? cause : new JobBusError('setting up the JetStream job bus failed', { cause });
  }
}

/** Tracks whether the connection is up and wakes waiters when that changes. */
class Connectivity {
  connected = true;
  #waiters = new Set<() => void>();
  #onDisconnect = new Set<() => void>();

  constructor(nc: NatsConnection) {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') {
          this.connected = false;
          for (const listener of this.#onDisconnect) listener();
        } else if (status.type === 'reconnect') {
          this.connected = true;
          this.wake();
        }
      }
    })();
    void nc.closed().then(() => {
      this.connected = false;
      this.wake();
    });
  }

  /** Resolves on the next reconnect, close or wake(), or after `timeoutMs` when given. */
  changed(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      this.#waiters.add(done);
    });
  }

  wake(): void {
    for (const done of [...this.#waiters]) done();
  }

  onDisconnect(listener: () => void): () => void {
    this.#onDisconnect.add(listener);
    return () => this.#onDisconnect.delete(listener);
  }
}

class JetStreamBus implements JobBus {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #js: JetStreamClient;
  readonly #topology: JetStreamTopology;
  readonly #consumers: Map<JobKind, Consumer>;
  readonly #requestTimeoutMs: number;
  readonly #connectivity: Connectivity;
  readonly #pullRetryDelayMs: (failures: number) => number;
  readonly #subscriptions = new Set<JobSubscription>();
  readonly #subjectPrefix: string;
  #closing: Promise<void> | undefined;
  /** Jobs announced in this turn of the event loop, published together at its end (see announce). */
  #announced: JobRef[] = [];

  constructor(
    nc: NatsConnection,
    jsm: JetStreamManager,
    js: JetStreamClient,
    topology: JetStreamTopology,
    consumers: Map<JobKind, Consumer>,
    connectivity: Connectivity,
    requestTimeoutMs: number,
    pullRetryDelayMs: (failures: number) => number,
    subjectPrefix: string,
  ) {
    this.#subjectPrefix = subjectPrefix;
    this.#nc = nc;
    this.#jsm = jsm;
    this.#js = js;
    this.#topology = topology;
    this.#consumers = consumers;
    this.#requestTimeoutMs = requestTimeoutMs;
    this.#connectivity = connectivity;
    this.#pullRetryDelayMs = pullRetryDelayMs;
  }

  publishProgress(update: JobProgressUpdate): void {
    if (this.#closing || this.#nc.isClosed()) return;
    try {
      // Core NATS: no stream keeps it; the client buffers it while reconnecting.
      this.#nc.publish(progressSubject(this.#subjectPrefix, update.brandId, update.mintJobId), encodeProgress(update));
    } catch {
      // a lost update is covered by the watchers' safety-net read
    }
  }

  subscribeProgress(handler: ProgressHandler): () => void {
    const sub = this.#nc.subscribe(allProgressSubject(this.#subjectPrefix), {
      callback: (error, msg) => {
        if (error) return;
        const update = decodeProgress(msg.data);
        if (update) handler(update);
      },
    });
    return () => sub.unsubscribe();
  }

  async publish(job: JobRef, options?: PublishOptions): Promise<void> {
    const clean = validateJobRef(job);
    this.#checkUsable(`publishing ${clean.kind} job ${clean.id}`);
    try {
      await this.#js.publish(this.#topology.subjects[clean.kind], encodeJobBody(clean), {
        msgID: jobDedupeKey(clean, options?.republish),
        timeout: this.#requestTimeoutMs,
      });
    } catch (cause) {
      throw new JobBusError(`publishing ${clean.kind} job ${clean.id} failed`, { cause });
    }
  }

  announce(job: JobRef): void {
    try {
      const clean = validateJobRef(job);
      if (this.#closing || this.#nc.isClosed() || !this.#connectivity.connected) return;
      // The announces of one turn of the event loop go out together, in one write to the
      // connection: under load several submits commit per turn, and each write of its own cost
      // the API about as much CPU as the rest of the publish.
      if (this.#announced.push(clean) === 1) setImmediate(() => this.#publishAnnounced());
    } catch {
      // dropped on purpose: the outbox relay publishes the job
    }
  }

  /** Publishes the jobs announced so far (core NATS publishes, flushed by the client in one write). */
  #publishAnnounced(): void {
    const jobs = this.#announced;
    this.#announced = [];
    if (this.#nc.isClosed() || !this.#connectivity.connected) return;
    for (const clean of jobs) {
      try {
        // A core NATS publish to the stream's subject is stored by JetStream like any other; the
        // Nats-Msg-Id header makes the relay's later publish of the same job a duplicate.
        const h = headers();
        h.set('Nats-Msg-Id', jobDedupeKey(clean));
        this.#nc.publish(this.#topology.subjects[clean.kind], encodeJobBody(clean), { headers: h });
      } catch {
        // dropped on purpose: the outbox relay publishes the job
      }
    }
  }

  subscribe(kind: JobKind, handler: JobHandler, options?: SubscribeOptions): JobSubscription {
    if (this.#closing) throw new JobBusError('the job bus is closed');
    const consumer = this.#consumers.get(kind);
    if (!consumer) throw new RangeError(`unknown job kind ${String(kind)}`);
    const subscription = new PullSubscription(
      kind,
      consumer,
      handler,
      resolveSubscribeOptions(options),
      this.#topology,
      this.#nc,
      this.#connectivity,
      () => ensureJetStreamTopology(this.#jsm, this.#topology),
      this.#requestTimeoutMs,
      this.#pullRetryDelayMs,
    );
    this.#subscriptions.add(subscription);
    void subscription.done.then(() => this.#subscriptions.delete(subscription));
    return subscription;
  }

  async pending(kind: JobKind): Promise<number> {
    const durable = this.#topology.durables[kind];
    this.#checkUsable(`reading consumer ${durable}`);
    try {
      const info = await this.#jsm.consumers.info(this.#topology.stream, durable);
      return info.num_pending;
    } catch (cause) {
      throw new JobBusError(`reading consumer ${durable} failed`, { cause });
    }
  }

  async ping(): Promise<void> {
    this.#checkUsable('ping');
    try {
      await this.#jsm.streams.info(this.#topology.stream);
    } catch (cause) {
      throw new JobBusError(`reading stream ${this.#topology.stream} failed`, { cause });
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      // Jobs announced before the close still go out (the drain below flushes them).
      this.#publishAnnounced();
      await Promise.all([...this.#subscriptions].map((subscription) => subscription.stop()));
      try {
        if (this.#connectivity.connected) {
          await this.#nc.drain();
        } else {
          await this.#nc.close();
        }
      } catch {
        // already closed or closing: nothing left to release
      }
    })();
    return this.#closing;
  }

  #checkUsable(what: string): void {
    if (this.#closing || this.#nc.isClosed()) throw new JobBusError(`${what}: the job bus is closed`);
    if (!this.#connectivity.connected) throw new JobBusError(`${what}: not connected to NATS`);
  }
}

/**
 * One subscription: `concurrency` workers, each pulling one message at a time with
 * its own pull request, so no message is ever buffered client-side while its ack
 * deadline runs. Pull requests are dropped on disconnect and re-issued on reconnect.
 */
class PullSubscription implements JobSubscription {
  readonly done: Promise<void>;
  readonly #kind: JobKind;
  readonly #consumer: Consumer;
  readonly #handler: JobHandler;
  readonly #options: ResolvedSubscribeOptions;
  readonly #maxDeliver: number;
  readonly #nc: NatsConnection;
  readonly #connectivity: Connectivity;
  readonly #reensure: () => Promise<void>;
  readonly #ackTimeoutMs: number;
  readonly #retryDelayMs: (failures: number) => number;
  readonly #pulls = new Set<ConsumerMessages>();
  readonly #removeDisconnectListener: () => void;
  #stopped = false;

  constructor(
    kind: JobKind,
    consumer: Consumer,
    handler: JobHandler,
    options: ResolvedSubscribeOptions,
    topology: JetStreamTopology,
    nc: NatsConnection,
    connectivity: Connectivity,
    reensure: () => Promise<void>,
    ackTimeoutMs: number,
    retryDelayMs: (failures: number) => number,
  ) {
    this.#kind = kind;
    this.#consumer = consumer;
    this.#handler = handler;
    this.#options = options;
    this.#maxDeliver = topology.maxDeliver;
    this.#nc = nc;
    this.#connectivity = connectivity;
    this.#reensure = reensure;
    this.#ackTimeoutMs = ackTimeoutMs;
    this.#retryDelayMs = retryDelayMs;
    this.#removeDisconnectListener = connectivity.onDisconnect(() => this.#abortPulls());
    const workers = Array.from({ length: options.concurrency }, () => this.#work());
    this.done = Promise.all(workers).then(() => undefined);
  }

  stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#removeDisconnectListener();
      this.#abortPulls();
      this.#connectivity.wake();
    }
    return this.done;
  }

  #abortPulls(): void {
    for (const pull of this.#pulls) pull.stop();
  }

  async #work(): Promise<void> {
    let failures = 0;
    while (!this.#stopped && !this.#nc.isClosed()) {
      if (!this.#connectivity.connected) {
        await this.#connectivity.changed();
        continue;
      }
      let msg: JsMsg | undefined;
      try {
        msg = await this.#pullOne();
        failures = 0;
      } catch (error) {
        if (this.#stopped || this.#nc.isClosed() || !this.#connectivity.connected) continue;
        failures += 1;
        this.#options.onError(new JobBusError(`pulling ${this.#kind} jobs failed`, { cause: error }), undefined);
        if (isMissingResource(error)) {
          await this.#reensure().catch((cause: unknown) => this.#options.onError(cause, undefined));
        }
        await this.#connectivity.changed(this.#retryDelayMs(failures));
        continue;
      }
      if (!msg) continue;
      if (this.#stopped) {
        // raced with stop(): hand it straight back instead of waiting for the ack deadline
        msg.nak();
        break;
      }
      await this.#deliver(msg);
    }
  }

  async #pullOne(): Promise<JsMsg | undefined> {
    const pull = await this.#consumer.fetch({ max_messages: 1, expires: PULL_EXPIRES_MS });
    this.#pulls.add(pull);
    // stop() or a disconnect may have happened while fetch() was starting
    if (this.#stopped || !this.#connectivity.connected) pull.stop();
    try {
      for await (const msg of pull) return msg;
      return undefined;
    } finally {
      this.#pulls.delete(pull);
      pull.stop();
    }
  }

  async #deliver(msg: JsMsg): Promise<void> {
    let job: JobRef;
    try {
      job = decodeJobBody(this.#kind, msg.data);
    } catch (error) {
      // it can never succeed: drop it and tell the owner
      this.#respond(() => msg.term(), undefined);
      this.#options.onError(error, undefined);
      return;
    }
    const deliveryCount = msg.info.deliveryCount;
    await runDelivery(
      job,
      deliveryCount,
      deliveryCount >= this.#maxDeliver,
      {
        working: () => this.#respond(() => msg.working(), job),
        ack: async () => {
          try {
            await msg.ackAck({ timeout: this.#ackTimeoutMs });
          } catch (cause) {
            throw new JobBusError(`ack of ${job.kind} job ${job.id} was not confirmed`, { cause });
          }
        },
        // nats-server 2.9 ignores a term reason, so none is sent
        nak: (delayMs) => this.#respond(() => (delayMs > 0 ? msg.nak(delayMs) : msg.nak()), job),
        term: () => this.#respond(() => msg.term(), job),
      },
      this.#handler,
      this.#options,
    );
  }

  // working/nak/term are fire-and-forget; on a closed connection they throw, which
  // must not surface inside the handler
  #respond(send: () => void, job: JobRef | undefined): void {
    try {
      send();
    } catch (cause) {
      this.#options.onError(new JobBusError('acknowledging a job message failed', { cause }), job);
    }
  }
}

function checkPositiveInteger(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
}
