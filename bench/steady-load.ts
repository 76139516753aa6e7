// An open-loop HTTP/1.1 load at a steady rate, for latency "at N requests/s": request n is due at
// start + n / rate and goes out on connection n mod connections (keep-alive, one request in flight
// per connection, no pipelining), whether or not the earlier answers came back. autocannon's
// `overallRate` instead sends each connection's share of a second back to back and then waits, so
// its latency is that of bursts at the server's full speed (see bench/resolver.ts).
//
// Latency is counted the way wrk2 counts it against coordinated omission: from when the request was
// due when its connection was still waiting for the previous answer then (the time it queued
// behind the server's backlog is the server's), else from when it was written (a late timer of this
// process is not the server's). Every answer must carry a Content-Length (the resolver's all do).
//
// The load runs in a child process of its own (this file), which holds nothing but the requests'
// bytes: a load generator sharing its process with the benchmark's other state paused in its own
// garbage collections (20-40 ms mark-compacts of ~90 MB live), and every request due meanwhile
// counted the pause as the server's latency.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** What {@link steadyLoad} sends. */
export interface SteadyLoadOptions {
  readonly port: number;
  readonly connections: number;
  /** Requests per second, spread evenly. */
  readonly rate: number;
  readonly seconds: number;
  /** The bytes of request `n` (a whole HTTP/1.1 request). */
  request(n: number): Buffer;
}

/** What one {@link steadyLoad} saw. */
export interface SteadyLoadResult {
  /** Latency of every answer, ms, ascending. */
  readonly latencies: number[];
  readonly statuses: Record<number, number>;
  /** Requests without an answer: a connection error or none within 10 s of the last one due. */
  readonly errors: number;
}

const headerEnd = Buffer.from('\r\n\r\n');

/** One keep-alive connection: its requests in order, one in flight. */
class Connection {
  readonly #socket: Socket;
  readonly #onAnswer: (latency: number, status: number) => void;
  readonly #waiting: { due: number; bytes: Buffer }[] = [];
  /** When the request in flight counts from; null when none is. */
  #basis: number | null = null;
  /** When the last answer arrived. */
  #freeAt = 0;
  #received: Buffer = Buffer.alloc(0);
  failed = false;

  constructor(socket: Socket, onAnswer: (latency: number, status: number) => void) {
    this.#socket = socket;
    this.#onAnswer = onAnswer;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => {
      this.failed = true;
    });
    socket.on('close', () => {
      this.failed = true;
    });
  }

  /** Requests not answered yet. */
  get pending(): number {
    return this.#waiting.length + (this.#basis === null ? 0 : 1);
  }

  submit(due: number, bytes: Buffer): void {
    if (this.#basis === null) this.#send(due, bytes);
    else this.#waiting.push({ due, bytes });
  }

  close(): void {
    this.#socket.destroy();
  }

  #send(due: number, bytes: Buffer): void {
    const now = performance.now();
    this.#basis = this.#freeAt > due ? due : now;
    this.#socket.write(bytes);
  }

  #read(chunk: Buffer): void {
    this.#received = this.#received.length === 0 ? chunk : Buffer.concat([this.#received, chunk]);
    for (;;) {
      const end = this.#received.indexOf(headerEnd);
      if (end === -1) return;
      const head = this.#received.toString('latin1', 0, end).toLowerCase();
      const at = head.indexOf('\r\ncontent-length:');
      if (at === -1) throw new Error(`an answer without Content-Length: ${head.split('\r\n')[0]}`);
      const length = Number.parseInt(head.slice(at + 17), 10);
      const total = end + 4 + length;
      if (this.#received.length < total) return;
      const status = Number(head.slice(9, 12));
      this.#received = this.#received.subarray(total);
      const now = performance.now();
      this.#onAnswer(now - this.#basis!, status);
      this.#basis = null;
      this.#freeAt = now;
      const next = this.#waiting.shift();
      if (next !== undefined) this.#send(next.due, next.bytes);
    }
  }
}

/**
 * Runs one steady load against 127.0.0.1:`port` from a child process; resolves once every request
 * was answered or given up on. The requests' bytes are built here and handed over in a file.
 */
export async function steadyLoad(options: SteadyLoadOptions): Promise<SteadyLoadResult> {
  const total = Math.round(options.rate * options.seconds);
  const requests = Array.from({ length: total }, (_, n) => options.request(n));
  const offsets = new Uint32Array(total + 1);
  for (let n = 0; n < total; n++) offsets[n + 1] = offsets[n]! + requests[n]!.length;
  const dir = mkdtempSync(join(tmpdir(), 'bench-steady-'));
  try {
    const file = join(dir, 'requests');
    writeFileSync(file, Buffer.concat([Buffer.from(offsets.buffer), ...requests]));
    const { request: _, ...settings } = options;
    const child = spawn(process.execPath, [import.meta.filename, file, JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the steady load's process exited with ${code}`);
    return JSON.parse(Buffer.concat(out).toString('utf8')) as SteadyLoadResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Child mode: the load of `file` (offsets, then the requests' bytes) with `settings`; prints its result as JSON. */
async function loadInThisProcess(file: string, settings: Omit<SteadyLoadOptions, 'request'>): Promise<void> {
  const bytes = readFileSync(file);
  const total = Math.round(settings.rate * settings.seconds);
  const offsets = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (total + 1) * 4));
  const body = bytes.subarray((total + 1) * 4);
  const result = await runSteadyLoad({ ...settings, request: (n) => body.subarray(offsets[n]!, offsets[n + 1]!) });
  process.stdout.write(JSON.stringify(result));
}

/** The load itself, in this process. */
async function runSteadyLoad(options: SteadyLoadOptions): Promise<SteadyLoadResult> {
  const { port, rate, seconds } = options;
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  const onAnswer = (latency: number, status: number) => {
    latencies.push(latency);
    statuses[status] = (statuses[status] ?? 0) + 1;
  };
  const connections = await Promise.all(
    Array.from(
      { length: options.connections },
      () =>
        new Promise<Connection>((resolve, reject) => {
          const socket = connect({ port, host: '127.0.0.1' }, () => resolve(new Connection(socket, onAnswer)));
          socket.once('error', reject);
        }),
    ),
  );
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const start = performance.now() + 5;
  await new Promise<void>((resolve) => {
    let n = 0;
    const tick = () => {
      const now = performance.now();
      for (; n < total && start + n * interval <= now; n++) connections[n % connections.length]!.submit(start + n * interval, options.request(n));
      if (n < total) setTimeout(tick, Math.max(0, start + n * interval - performance.now()));
      else resolve();
    };
    setTimeout(tick, 5);
  });
  // The last answers: wait for them, at most 10 s.
  const deadline = performance.now() + 10_000;
  while (connections.some((c) => c.pending > 0 && !c.failed) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  const errors = connections.reduce((sum, c) => sum + c.pending, 0);
  for (const c of connections) c.close();
  latencies.sort((a, b) => a - b);
  return { latencies, statuses, errors };
}

if (import.meta.main) await loadInThisProcess(process.argv[2]!, JSON.parse(process.argv[3]!) as Omit<SteadyLoadOptions, 'request'>);
