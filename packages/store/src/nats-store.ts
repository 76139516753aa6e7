import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, StorageType, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import { Objm, setSha256Backend, type ObjectInfo, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { assertFileName, assertStoragePath, StoreNotFoundError, type ByteRange, type PackStore, type PackWriter, type StoredFile } from './store.ts';

/** Options of {@link createNatsPackStore}. */
export interface NatsPackStoreOptions {
  /** Bucket name (letters, digits, `-`, `_`); the backing stream is {@link objectStoreStream}. */
  readonly bucket: string;
  /** Replicas of the bucket's stream (1, 3 or 5 in a cluster); an existing bucket is updated to it. */
  readonly replicas?: number;
  /**
   * Bytes per segment object a file is split into; a Range read skips whole segments, and a file
   * being written holds two in memory. Default 1 MiB (4 chunks of the default size): larger ones
   * were no faster and raised a 1,000,000-unit pack's peak RSS past 200 MB.
   */
  readonly segmentBytes?: number;
  /** Bytes per chunk message of an object; at most the server's max_payload. Default 256 KiB. */
  readonly chunkBytes?: number;
}

/** One segment object of a stored file. */
interface SegmentRef {
  readonly object: string;
  readonly size: number;
}

/** The index object of a pack: published last, so it names only complete files. */
interface PackIndex {
  readonly format: 'mint-pack-index/v1';
  /** Random id of the write that produced the files; their objects are named under it. */
  readonly generation: string;
  readonly files: Readonly<Record<string, { readonly size: number; readonly segments: readonly SegmentRef[] }>>;
}

/** The JetStream stream a NATS Object Store bucket is kept in (the object store's naming rule). */
export const objectStoreStream = (bucket: string): string => `OBJ_${bucket}`;

const defaultSegmentBytes = 1024 * 1024;
const defaultChunkBytes = 256 * 1024;

const indexSuffix = '/pack.json';
/** Name of the index object of the pack at `storagePath`. */
const indexName = (storagePath: string) => `${storagePath}${indexSuffix}`;

/**
 * The pack store on a NATS JetStream Object Store bucket (created when missing, with `replicas`).
 * A pack's files are written as segment objects named under a random generation
 * (`{storagePath}/{generation}/{file}.{n}`); `commit` publishes the pack's index object
 * (`{storagePath}/pack.json`) last, in one message, so readers see either the old or the new pack,
 * never half of one; the previous generation's objects are deleted after (a download of it still
 * running is cut; resumed with `If-Range`, it then gets the new pack whole). Reads fetch one chunk
 * message at a time, from any replica, as the consumer of the stream asks for more, so a slow
 * download holds at most a chunk or two in memory; a range read starts at the segment that holds its
 * first byte. A crash between the segments and the index leaves unreferenced segment objects (and
 * the chunk messages of a segment cut off mid-put) behind; `sweep` deletes them once they are older
 * than any write takes.
 */
export async function createNatsPackStore(nc: NatsConnection, options: NatsPackStoreOptions): Promise<PackStore> {
  // The object store digests every object it puts and gets; its default is a pure-JavaScript SHA-256
  // that held the executor's event loop for most of a pack's write, delaying the next job's claim
  // and first chunk behind it. node:crypto's (process-wide, set before any object store call) does
  // the same bytes natively.
  setSha256Backend('native');
  const replicas = options.replicas ?? 1;
  const segmentBytes = options.segmentBytes ?? defaultSegmentBytes;
  const chunkBytes = Math.min(options.chunkBytes ?? defaultChunkBytes, nc.info?.max_payload ?? defaultChunkBytes);
  const objm = new Objm(nc);
  const bucket = await objm.create(options.bucket, { replicas, storage: StorageType.File });
  const jsm = await jetstreamManager(nc, { timeout: 2_000 });
  const stream = objectStoreStream(options.bucket);
  const current = await jsm.streams.info(stream);
  if (current.config.num_replicas !== replicas) {
    await jsm.streams.update(stream, { ...current.config, num_replicas: replicas });
    // Until the new peers are placed and current, reads and writes of the bucket may time out.
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
      const info = await jsm.streams.info(stream).catch(() => undefined);
      const peers = info?.cluster?.replicas ?? [];
      if (info?.cluster?.leader !== undefined && peers.length >= replicas - 1 && peers.every((p) => p.current)) break;
    }
  }
  const reader = new ObjectReader(jsm, options.bucket);

  const readIndex = async (storagePath: string): Promise<PackIndex | null> => {
    const info = await reader.info(indexName(storagePath));
    if (info === null) return null;
    const parts: Buffer[] = [];
    for await (const chunk of reader.chunks(info, 0, info.size - 1)) parts.push(chunk);
    return JSON.parse(Buffer.concat(parts).toString('utf8')) as PackIndex;
  };
  const deleteObjects = async (names: readonly string[]) => {
    for (const name of names) await bucket.delete(name).catch(() => undefined);
  };
  const objectsOf = (index: PackIndex) => Object.values(index.files).flatMap((f) => f.segments.map((s) => s.object));

  return {
    async begin(storagePath) {
      assertStoragePath(storagePath);
      const generation = randomBytes(8).toString('hex');
      const files = new Map<string, SegmentedFile>();
      let done = false;
      const writer: PackWriter = {
        file(name) {
          assertFileName(name);
          if (files.has(name)) throw new Error(`${name} is already being written`);
          const file = new SegmentedFile(bucket, `${storagePath}/${generation}/${name}`, segmentBytes, chunkBytes);
          files.set(name, file);
          return file;
        },
        async commit() {
          const entries = await Promise.all([...files].map(async ([name, file]) => [name, await file.completed()] as const));
          const index: PackIndex = {
            format: 'mint-pack-index/v1',
            generation,
            files: Object.fromEntries(entries.map(([name, segments]) => [name, { size: segments.reduce((n, s) => n + s.size, 0), segments }])),
          };
          const previous = await readIndex(storagePath);
          await bucket.putBlob({ name: indexName(storagePath) }, Buffer.from(JSON.stringify(index)));
          done = true;
          if (previous !== null && previous.generation !== generation) await deleteObjects(objectsOf(previous));
        },
        async abort() {
          if (done) return;
          done = true;
          const written = await Promise.all([...files.values()].map((f) => f.discard()));
          await deleteObjects(written.flat());
        },
      };
      return writer;
    },
    async open(storagePath, file): Promise<StoredFile> {
      assertStoragePath(storagePath);
      assertFileName(file);
      const entry = (await readIndex(storagePath))?.files[file];
      if (entry === undefined) throw new StoreNotFoundError(`${storagePath}/${file} is not in the store`);
      return { size: entry.size, stream: (range?: ByteRange) => readSegments(reader, `${storagePath}/${file}`, entry.segments, range) };
    },
    async remove(storagePath) {
      assertStoragePath(storagePath);
      const index = await readIndex(storagePath);
      if (index === null) return;
      await bucket.delete(indexName(storagePath));
      await deleteObjects(objectsOf(index));
    },
    async sweep(writtenBefore) {
      const cutoff = writtenBefore.getTime();
      const objects = await bucket.list();
      // The generation each committed pack's index names; segment objects of any other are leftovers.
      const current = new Map<string, string>();
      for (const o of objects) {
        if (!o.name.endsWith(indexSuffix)) continue;
        const storagePath = o.name.slice(0, -indexSuffix.length);
        const index = await readIndex(storagePath);
        if (index !== null) current.set(storagePath, index.generation);
      }
      const writes = new Map<string, { readonly storagePath: string; readonly generation: string; readonly names: string[]; newest: number }>();
      for (const o of objects) {
        const parts = o.name.split('/');
        if (o.name.endsWith(indexSuffix) || parts.length < 3) continue;
        const storagePath = parts.slice(0, -2).join('/');
        const generation = parts[parts.length - 2]!;
        const key = `${storagePath}/${generation}`;
        const write = writes.get(key) ?? { storagePath, generation, names: [], newest: 0 };
        write.names.push(o.name);
        write.newest = Math.max(write.newest, Date.parse(o.mtime));
        writes.set(key, write);
      }
      let removed = 0;
      for (const write of writes.values()) {
        if (current.get(write.storagePath) === write.generation || write.newest >= cutoff) continue;
        await deleteObjects(write.names);
        removed += write.names.length;
      }
      // Chunk messages of an object whose meta was never published (a put cut off mid-segment).
      const live = new Set(objects.map((o) => o.nuid));
      const chunkPrefix = `$O.${options.bucket}.C.`;
      const { state } = await jsm.streams.info(stream, { subjects_filter: `${chunkPrefix}>` });
      for (const subject of Object.keys(state.subjects ?? {})) {
        if (live.has(subject.slice(chunkPrefix.length))) continue;
        const last = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
        if (last === null || last.time.getTime() >= cutoff) continue;
        await jsm.streams.purge(stream, { filter: subject });
        removed += 1;
      }
      return removed;
    },
  };
}

/**
 * A writable file split into segment objects of `segmentBytes`. Writes are copied into a segment
 * buffer (the caller's Buffer is its own again at the callback, see PackWriter.file); a full buffer
 * is put as one object while the other one fills, and a write waits when both are taken. Put
 * whole, a segment is published as views of its buffer, one chunk message each, without the
 * copies a streamed put makes (measured: half the CPU of a 1,000,000-unit pack into the bucket);
 * a buffer is filled again only once its put resolved, when every chunk was acknowledged and so
 * sent. So a file holds at most two segments in memory.
 */
class SegmentedFile extends Writable {
  readonly #bucket: ObjectStore;
  readonly #prefix: string;
  readonly #segmentBytes: number;
  readonly #chunkBytes: number;
  readonly #puts: Promise<SegmentRef>[] = [];
  /** The buffer being filled, and how much of it is. */
  #filling: Buffer | undefined;
  #used = 0;
  /** The other buffer, with the put that must end before it is filled again. */
  #other: { readonly buffer: Buffer; readonly put: Promise<unknown> } | undefined;
  #finished: Promise<void>;

  constructor(bucket: ObjectStore, prefix: string, segmentBytes: number, chunkBytes: number) {
    super({ highWaterMark: chunkBytes });
    this.#bucket = bucket;
    this.#prefix = prefix;
    this.#segmentBytes = segmentBytes;
    this.#chunkBytes = chunkBytes;
    this.#finished = new Promise((resolve, reject) => {
      this.once('finish', resolve);
      this.once('error', reject);
    });
    this.#finished.catch(() => undefined);
  }

  /**
   * Puts the filled part of the current buffer as the next segment object and swaps buffers;
   * resolves once the buffer to fill next is free (its own put, if any, ended).
   */
  #putFilled(): Promise<unknown> {
    const buffer = this.#filling ?? Buffer.alloc(0);
    const object = `${this.#prefix}.${this.#puts.length}`;
    const put = this.#bucket
      .putBlob({ name: object, options: { max_chunk_size: this.#chunkBytes } }, buffer.subarray(0, this.#used))
      .then((info: ObjectInfo) => ({ object, size: info.size }));
    put.catch((error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))));
    this.#puts.push(put);
    const previous = this.#other;
    this.#filling = previous?.buffer;
    this.#other = { buffer, put };
    this.#used = 0;
    return previous?.put ?? Promise.resolve();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let rest = chunk;
    const next = (): void => {
      while (rest.length > 0) {
        if (this.#used === this.#segmentBytes) {
          const free = this.#putFilled();
          // The buffer to fill next may still be being put: copy on once it is free.
          if (this.#filling !== undefined) return void free.then(next, (error: unknown) => callback(error as Error));
        }
        this.#filling ??= Buffer.allocUnsafeSlow(this.#segmentBytes);
        const copied = rest.copy(this.#filling, this.#used, 0, this.#segmentBytes - this.#used);
        this.#used += copied;
        rest = rest.subarray(copied);
      }
      callback();
    };
    next();
  }

  override _final(callback: (error?: Error | null) => void): void {
    // The last (or, for an empty file, the only) segment.
    if (this.#used > 0 || this.#puts.length === 0) this.#putFilled();
    Promise.all(this.#puts).then(
      () => callback(),
      (error: unknown) => callback(error as Error),
    );
  }

  /** The segments once the file was ended and every segment object is stored. */
  async completed(): Promise<SegmentRef[]> {
    await this.#finished;
    return Promise.all(this.#puts);
  }

  /** Stops writing; the names of the segment objects that may have been stored, for deletion. */
  async discard(): Promise<string[]> {
    this.destroy();
    await Promise.allSettled(this.#puts);
    return this.#puts.map((_, i) => `${this.#prefix}.${i}`);
  }
}

/** What an object's meta message says (the fields this store reads). */
interface ObjectMeta {
  readonly nuid: string;
  readonly size: number;
  readonly chunks: number;
  readonly deleted?: boolean;
}

/**
 * Reads objects of the bucket message by message. Each message is asked of any replica first
 * (JetStream direct get, which keeps answering while the stream elects a new leader after losing
 * one) and of the stream leader when that replica does not have it (a node still catching up);
 * failed attempts are retried a few times before the error is thrown.
 */
class ObjectReader {
  readonly #jsm: JetStreamManager;
  readonly #bucket: string;
  readonly #stream: string;
  constructor(jsm: JetStreamManager, bucket: string) {
    this.#jsm = jsm;
    this.#bucket = bucket;
    this.#stream = objectStoreStream(bucket);
  }

  async #message(query: { last_by_subj: string } | { seq: number; next_by_subj: string }): Promise<StoredMsg | null> {
    let failure: unknown;
    for (let attempt = 1; attempt <= 4; attempt++) {
      try {
        const found = await this.#jsm.direct.getMessage(this.#stream, query);
        if (found !== null) return found;
      } catch (error) {
        failure = error;
      }
      try {
        return await this.#jsm.streams.getMessage(this.#stream, query as { last_by_subj: string });
      } catch (error) {
        failure = error;
      }
      await sleep(250 * attempt);
    }
    throw failure;
  }

  /** The object's meta (the object store's `$O.<bucket>.M.<base64url name>` message); null when missing or deleted. */
  async info(name: string): Promise<ObjectMeta | null> {
    const encoded = Buffer.from(name, 'latin1').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    const message = await this.#message({ last_by_subj: `$O.${this.#bucket}.M.${encoded}` });
    if (message === null) return null;
    const meta = message.json<ObjectMeta>();
    return meta.deleted === true ? null : meta;
  }

  /** Bytes `start..end` (inclusive) of the object, one chunk message at a time, fetched as the consumer asks. */
  async *chunks(meta: ObjectMeta, start: number, end: number): AsyncGenerator<Buffer> {
    const subject = `$O.${this.#bucket}.C.${meta.nuid}`;
    let seq = 0;
    let position = 0;
    for (let chunk = 0; chunk < meta.chunks && position <= end; chunk++) {
      const message = await this.#message({ seq, next_by_subj: subject });
      if (message === null) throw new StoreNotFoundError(`chunk ${chunk} of object ${meta.nuid} is missing`);
      seq = message.seq + 1;
      const data = Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength);
      const from = Math.max(start - position, 0);
      const to = Math.min(end - position + 1, data.length);
      position += data.length;
      if (to > from) yield data.subarray(from, to);
    }
  }
}

/**
 * Streams bytes `range` (default all) of a file stored as `segments`, starting at the segment that
 * holds the range's first byte, only as fast as the reader consumes.
 */
function readSegments(reader: ObjectReader, label: string, segments: readonly SegmentRef[], range?: ByteRange): Readable {
  const total = segments.reduce((n, s) => n + s.size, 0);
  const start = range?.start ?? 0;
  const end = Math.min(range?.end ?? total - 1, total - 1);
  async function* generate(): AsyncGenerator<Buffer> {
    let offset = 0;
    for (const segment of segments) {
      const segmentEnd = offset + segment.size;
      if (segmentEnd > start && offset <= end) {
        const meta = await reader.info(segment.object);
        if (meta === null || meta.size !== segment.size) throw new StoreNotFoundError(`${label} lost its segment ${segment.object}`);
        yield* reader.chunks(meta, Math.max(start - offset, 0), Math.min(end, segmentEnd - 1) - offset);
      }
      offset = segmentEnd;
    }
  }
  return Readable.from(generate(), { objectMode: false, highWaterMark: 1 });
}
