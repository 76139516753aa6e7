// One TCP port for HTTP/1.1 and cleartext HTTP/2 (h2c with prior knowledge, as gRPC clients
// use it). Node's HTTP/2 server does not speak HTTP/1.1 without TLS, so each new connection is
// peeked: the HTTP/2 connection preface sends it to an http2 server, anything else to an http
// server. Both share one request listener.

import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type Http2Session } from 'node:http2';
import net, { type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { plainErrorBody, type HttpError } from './errors.ts';
import type { HttpRequest, HttpResponse } from './types.ts';

/** The first bytes of every HTTP/2 connection (RFC 9113 section 3.4). */
const http2Preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Handles a request of either HTTP version. */
export type RequestListener = (req: HttpRequest, res: HttpResponse) => void;

/** Options of {@link createDualListener}. */
export interface DualListenerOptions {
  /** A connection that sends nothing for this long after connecting is closed. */
  readonly prefaceTimeoutMs?: number;
  /** HTTP/1.1 keep-alive idle timeout (between requests); default `idleTimeoutMs` when that is given, else 5 s. */
  readonly keepAliveTimeoutMs?: number;
  /** An HTTP/1.1 client must send its complete request headers within this (the API gives `HTTP_HEADERS_TIMEOUT_MS`'s). */
  readonly headersTimeoutMs: number;
  /** An HTTP/1.1 request must arrive whole, headers and body, within this (slow senders are cut; the API gives `HTTP_REQUEST_TIMEOUT_MS`'s). */
  readonly requestTimeoutMs: number;
  /** An HTTP/2 session without any frame for this long is closed, and an HTTP/1.1 keep-alive connection without a request; default 30 s (5 s for HTTP/1.1 when not given). */
  readonly idleTimeoutMs?: number;
  /**
   * A request body that is still open and sends nothing for this long is cut (a slow or stalled
   * sender): an HTTP/2 stream is cancelled and its session told to go away, an HTTP/1.1 connection
   * is closed; default 15 s. Requests whose body ended are not affected, however long their
   * response takes.
   */
  readonly bodyTimeoutMs?: number;
  /** Streams one HTTP/2 session may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); default 100. */
  readonly maxConcurrentStreams?: number;
}

/** A listening socket that serves HTTP/1.1 and h2c through one request listener. */
export interface DualListener {
  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(port: number, host?: string): Promise<number>;
  /**
   * Stops accepting connections, asks HTTP/2 clients to go away (GOAWAY), closes idle HTTP/1.1
   * connections and closes busy ones after their current response, then resolves when every
   * connection has closed, or destroys the rest after `timeoutMs`.
   */
  close(timeoutMs: number): Promise<void>;
  /** True once `close` was called; the request listener adds `Connection: close` to HTTP/1.1 responses. */
  readonly closing: boolean;
}

/** Creates the listener; nothing is bound until `listen`. */
export function createDualListener(listener: RequestListener, options: DualListenerOptions): DualListener {
  const prefaceTimeoutMs = options.prefaceTimeoutMs ?? 10_000;
  /** Every accepted connection and the protocol it turned out to speak (`pending` until peeked). */
  const sockets = new Map<Socket, 'pending' | 'http1' | 'http2'>();
  const sessions = new Set<Http2Session>();
  /**
   * The responses in progress on each HTTP/1.1 connection (several only when requests are
   * pipelined; none between keep-alive requests), told to close their connection when shutdown
   * starts. One array per connection, never a collection that every response enters and leaves:
   * such a Set's backing tables, reallocated as it grows and shrinks, are chained to each other,
   * and a dead one kept every later response alive through garbage collections of the young
   * generation (measured under a steady 5,000 scans/s: 7 MB surviving each one, pauses of 9 ms).
   */
  const h1Responses = new Map<Socket, ServerResponse[]>();
  let closing = false;
  let closed: Promise<void> | undefined;

  const headersTimeout = options.headersTimeoutMs;
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMs);
  const h1Options = {
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(Math.min(headersTimeout, requestTimeout) / 4))),
  };
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 15_000;
  const h1 = http.createServer(h1Options, (req, res) => {
    const socket = req.socket;
    watchH1Body(req, bodyTimeoutMs);
    const responses = h1Responses.get(socket) ?? [];
    responses.push(res);
    res.once('close', () => {
      const at = responses.indexOf(res);
      if (at !== -1) responses.splice(at, 1);
      if (closing && responses.length === 0) socket.destroySoon();
    });
    if (closing) res.setHeader('connection', 'close');
    listener(req, res);
  });
  h1.keepAliveTimeout = options.keepAliveTimeoutMs ?? options.idleTimeoutMs ?? 5_000;
  h1.on('clientError', answerParserError);
  h1.on('connection', (socket: Socket) => {
    h1Responses.set(socket, []);
    socket.once('close', () => h1Responses.delete(socket));
  });
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? 100 } }, (req, res) => {
    const stream = req.stream;
    stream.setTimeout(bodyTimeoutMs, () => {
      // Quiet while the body is still open: a stalled sender. A finished request may take its time.
      if (stream.destroyed || stream.state.remoteClose) return;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      stream.session?.close();
    });
    listener(req, res);
  });
  h2.on('session', (session: Http2Session) => {
    session.setTimeout(idleTimeoutMs, () => session.close());
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    if (closing) session.close();
  });

  const tcp = net.createServer((socket) => {
    sockets.set(socket, 'pending');
    socket.once('close', () => sockets.delete(socket));
    if (closing) {
      socket.destroy();
      return;
    }
    // Until handed over, nobody else listens for errors on this socket.
    const onError = () => socket.destroy();
    socket.on('error', onError);
    socket.setTimeout(prefaceTimeoutMs, () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, http2Preface.length);
      const isHttp2 = head.subarray(0, n).equals(http2Preface.subarray(0, n));
      if (isHttp2 && n < http2Preface.length) return; // could still be the preface: wait for more
      socket.off('data', onData);
      socket.off('error', onError);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(head);
      sockets.set(socket, isHttp2 ? 'http2' : 'http1');
      if (isHttp2) {
        // Http2Session first reads what is already buffered on the socket.
        h2.emit('connection', socket);
      } else {
        // The HTTP/1 parser reads the handle directly; the buffered head is replayed to it as a
        // 'data' event once the socket flows again.
        h1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  });

  async function shutdown(timeoutMs: number): Promise<void> {
    closing = true;
    const allClosed = new Promise<void>((resolve) => tcp.close(() => resolve()));
    // Stops the http server's connection checks (it has no socket of its own to close).
    h1.close();
    for (const session of sessions) session.close();
    for (const responses of h1Responses.values()) for (const res of responses) if (!res.headersSent) res.setHeader('connection', 'close');
    for (const [socket, kind] of sockets) {
      // Connections still waiting for their first bytes, and idle keep-alive connections.
      if (kind === 'pending' || (kind === 'http1' && (h1Responses.get(socket)?.length ?? 0) === 0)) socket.destroy();
    }
    const timer = setTimeout(() => {
      for (const socket of sockets.keys()) socket.destroy();
    }, timeoutMs);
    try {
      await allClosed;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    get closing() {
      return closing;
    },
    listen(port, host) {
      return new Promise((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, host, () => {
          tcp.off('error', reject);
          // The http server never binds a port itself; 'listening' starts its connection
          // tracking, which enforces headersTimeout and requestTimeout (slow-client protection).
          h1.emit('listening');
          const address = tcp.address();
          resolve(typeof address === 'object' && address !== null ? address.port : port);
        });
      });
    },
    close(timeoutMs) {
      return (closed ??= shutdown(timeoutMs));
    },
  };
}

/** What the HTTP/1.1 parser refuses before any route runs: its status, stable code and message. */
function parserProblem(err: NodeJS.ErrnoException & { reason?: unknown }): HttpError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'request_header_fields_too_large', message: `the request line and headers exceed ${http.maxHeaderSize} bytes` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', message: 'the chunk extensions of the request body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'request_timeout', message: 'the request did not arrive whole within the time allowed' };
    default:
      return { status: 400, code: 'bad_request', message: `malformed HTTP request${typeof err.reason === 'string' ? `: ${err.reason}` : ''}` };
  }
}

/**
 * Answers what the HTTP/1.1 parser refused (a head past the size limit, a malformed request, one
 * that never completed) as Node would, with the status and `Connection: close`, but with the plain
 * JSON error body every other refusal has. Nothing is written when the socket cannot take it, or
 * once a response on it has started (that would corrupt it); the connection is closed either way.
 */
function answerParserError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // Node's own handler makes the same check on the same (undocumented) field.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && inFlight?.headersSent !== true) {
    const problem = parserProblem(err);
    const body = JSON.stringify(plainErrorBody(problem));
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `cache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    return;
  }
  socket.destroy();
}

/**
 * Cuts an HTTP/1.1 connection whose request body sends nothing for `timeoutMs` (Node's own
 * `requestTimeout` only bounds the whole request). The HTTP parser reads the socket's handle
 * directly, so progress is judged by the bytes the socket read: each `timeoutMs` without a new
 * byte while the body is unfinished closes the connection (detected within two periods).
 */
function watchH1Body(req: IncomingMessage, timeoutMs: number): void {
  const length = req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody || req.complete) return;
  const socket = req.socket;
  let seen = socket.bytesRead;
  const timer = setInterval(() => {
    if (req.complete || socket.destroyed) return stop();
    if (socket.bytesRead !== seen) {
      seen = socket.bytesRead;
      return;
    }
    stop();
    socket.destroy();
  }, timeoutMs);
  timer.unref();
  // Not stopped when the answer is sent: a body left unread after an early answer (401, 413) is
  // still drained by the keep-alive connection, and a stall there is cut too.
  const stop = () => clearInterval(timer);
  req.once('end', stop);
}
