// connect-node's adapter, with credentials checked from the headers before any body byte is read,
// per-operation body limits on inflated bytes, and undecodable request bodies answered as bad
// input in every protocol.

import { fromBinary, type DescMethod } from '@bufbuild/protobuf';
import {
  Code, ConnectError, createConnectRouter, createContextKey, createContextValues, type ContextValues, type Interceptor,
} from '@connectrpc/connect';
import {
  compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse,
  type ConnectNodeAdapterOptions,
} from '@connectrpc/connect-node';
import {
  readAllBytes, uResponseNotFound,
  type Compression, type UniversalHandler, type UniversalServerRequest, type UniversalServerResponse,
} from '@connectrpc/connect/protocol';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRequest, HttpResponse } from './listener.ts';
import { nonDecimalNumber } from './json-numbers.ts';

/** Largest request body any RPC reads (StartProductImport carries a CSV of up to 32 MiB). */
export const readMaxBytes = 40 * 1024 * 1024;

/** Default largest body of an ordinary RPC (every RPC but the imports), inflated: 64 KiB. */
export const defaultRpcMaxBodyBytes = 64 * 1024;

/** What the adapter checks before and while reading a request body. */
export interface BodyPolicy {
  /**
   * Runs on the headers alone, before any body byte is read or inflated (credentials). What it
   * throws answers the call (in the protocol's own way) and the body is never read.
   */
  readonly beforeBody?: (method: DescMethod, header: Headers, contextValues: ContextValues) => Promise<void>;
  /** The largest body of `method`, counted on the wire and again after decompression. */
  readonly maxBodyBytes: (method: DescMethod) => number;
}

const compressions: readonly Compression[] = [compressionGzip, compressionBrotli];

/**
 * Like `connectNodeAdapter`, with one correction: connect-es answers a body that does not
 * decompress, or a protobuf message that does not decode, with `internal` before any interceptor
 * runs (Connect unary, Connect streaming, gRPC and gRPC-Web alike). Such a body is the client's
 * mistake, so the request is read, decompressed and decoded here first. When that fails, the
 * library gets an empty message instead and {@link rejectUndecodableBody}, one of the
 * interceptors, answers `invalid_argument` with the reason, so each protocol reports it in its
 * own way (a JSON body, an end-of-stream message, gRPC trailers). Every other request reaches the
 * library untouched.
 */
export interface ConnectAdapter {
  (req: HttpRequest, res: HttpResponse): void;
  /** True when `path` (without its query) names an RPC; any other path is answered 404. */
  serves(path: string): boolean;
}

export function connectAdapter(options: ConnectNodeAdapterOptions & { readonly body?: BodyPolicy }): ConnectAdapter {
  const router = createConnectRouter({ acceptCompression: [...compressions], ...options, readMaxBytes });
  options.routes?.(router);
  const policy: BodyPolicy = options.body ?? { maxBodyBytes: () => readMaxBytes };
  const paths = new Map(router.handlers.map((handler) => [handler.requestPath, checkBody(handler, policy)]));
  const serve = (req: HttpRequest, res: HttpResponse): void => {
    const handler = paths.get((req.url ?? '').split('?', 1)[0]!);
    if (!handler) {
      res.statusCode = uResponseNotFound.status;
      res.end();
      return;
    }
    const contextValues = options.contextValues?.(req);
    const uReq = 'stream' in req ? universalRequestFromNodeRequest(req, res, undefined, contextValues) : h1Request(req, res as ServerResponse, contextValues);
    handler(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch(() => res.destroy());
  };
  return Object.assign(serve, { serves: (path: string) => paths.has(path) });
}

/**
 * connect-node's `universalRequestFromNodeRequest` for an HTTP/1.1 request: the same URL, headers
 * and body, and a signal that aborts when the connection fails or closes while the call is still
 * being answered. connect-node aborts the signal on every close, finished call or not, which built
 * an AbortError (with its stack trace) per request after the call was over, and wraps the body in
 * an async generator; together about 4 % of the API's CPU per submit. Here the body is the request
 * stream itself, and a call whose answer was sent whole is not aborted.
 */
function h1Request(req: IncomingMessage, res: ServerResponse, contextValues: ContextValues | undefined): UniversalServerRequest {
  const authority = req.headers.host;
  if (authority === undefined) throw new ConnectError('unable to determine request authority from Node.js server request', Code.Internal);
  const protocol = 'encrypted' in req.socket && req.socket.encrypted === true ? 'https' : 'http';
  const abort = new AbortController();
  // A failed request stream is a connection the client reset: aborted, as connect-node reports it.
  const onError = (error: Error) => {
    stop();
    abort.abort(ConnectError.from(error, Code.Aborted));
  };
  const onClose = () => {
    stop();
    if (res.writableFinished) return;
    abort.abort(req.errored ? ConnectError.from(req.errored, Code.Aborted) : new ConnectError('the client closed the connection', Code.Canceled));
  };
  const stop = () => {
    req.off('error', onError);
    res.off('close', onClose);
  };
  req.once('error', onError);
  res.once('close', onClose);
  const header = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') header.append(name, value);
    else if (value !== undefined) for (const item of value) header.append(name, item);
  }
  return {
    httpVersion: req.httpVersion,
    method: req.method ?? '',
    url: new URL(req.url ?? '', `${protocol}://${authority}`).toString(),
    header,
    body: req,
    signal: abort.signal,
    ...(contextValues === undefined ? {} : { contextValues }),
  };
}

/** Why the request body was not read or could not be, set by the adapter for {@link rejectUndecodableBody}. */
const undecodableBodyKey = createContextKey<unknown>(undefined, { description: 'refused request body' });

/** Answers a call whose body the adapter could not decode with the reason it recorded. Place it after logging and error mapping. */
export const rejectUndecodableBody: Interceptor = (next) => (req) => {
  const error = req.contextValues.get(undecodableBodyKey);
  if (error !== undefined) throw error;
  return next(req);
};

/** How a protocol frames and compresses a request body, by Content-Type. */
interface Framing {
  /** Messages carry the 5-byte envelope (flags, length) of Connect streaming, gRPC and gRPC-Web. */
  readonly enveloped: boolean;
  /** The header naming the body's (Connect unary) or each message's (enveloped) compression. */
  readonly encodingHeader: string;
  /** Protobuf messages (JSON ones are only decompressed here; the library reports their parse errors well). */
  readonly binary: boolean;
}

function framingOf(contentType: string | null): Framing | undefined {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  switch (type) {
    case 'application/proto': return { enveloped: false, encodingHeader: 'content-encoding', binary: true };
    case 'application/json': return { enveloped: false, encodingHeader: 'content-encoding', binary: false };
    case 'application/connect+proto': return { enveloped: true, encodingHeader: 'connect-content-encoding', binary: true };
    case 'application/connect+json': return { enveloped: true, encodingHeader: 'connect-content-encoding', binary: false };
    case 'application/grpc': case 'application/grpc+proto':
    case 'application/grpc-web': case 'application/grpc-web+proto':
      return { enveloped: true, encodingHeader: 'grpc-encoding', binary: true };
    case 'application/grpc+json': case 'application/grpc-web+json':
      return { enveloped: true, encodingHeader: 'grpc-encoding', binary: false };
    // Anything else (gRPC-Web text, unsupported types) is the library's to answer.
    default: return undefined;
  }
}

/**
 * `handler`, with the body of a unary or server-streaming POST read and checked first: the
 * policy's header check runs before any byte is read, then at most the method's limit is read
 * and, when compressed, inflated.
 */
function checkBody(handler: UniversalHandler, policy: BodyPolicy): UniversalHandler {
  const kind = handler.method.methodKind;
  if (kind !== 'unary' && kind !== 'server_streaming') return handler;
  const limit = policy.maxBodyBytes(handler.method);
  const wrapped = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const framing = framingOf(req.header.get('content-type'));
    const readable = req.method === 'POST' && typeof req.body === 'object' && req.body !== null && Symbol.asyncIterator in req.body;
    if (framing === undefined || !readable) return handler(req);
    if (policy.beforeBody !== undefined) {
      try {
        await policy.beforeBody(handler.method, req.header, req.contextValues ??= createContextValues());
      } catch (error) {
        return refuse(req, framing, handler, error);
      }
    }
    const encoding = req.header.get(framing.encodingHeader) ?? 'identity';
    const compression = encoding === 'identity' ? null : compressions.find((c) => c.name === encoding);
    // Unknown encodings are answered by the library itself (unimplemented, as the protocols say).
    if (compression === undefined) return handler(req);

    let bytes: Uint8Array;
    try {
      bytes = await readAllBytes(req.body as AsyncIterable<Uint8Array>, limit, req.header.get('content-length'));
    } catch (error) {
      return refuse(req, framing, handler, ConnectError.from(error, Code.InvalidArgument));
    }
    const problem = framing.enveloped
      ? await checkEnvelopes(bytes, compression, framing.binary, handler, encoding, limit)
      : await checkMessage(bytes, compression, framing.binary, handler, encoding, limit);
    if (problem !== undefined) return refuse(req, framing, handler, problem);
    return handler({ ...req, body: oneChunk(bytes) });
  };
  return Object.assign(wrapped, handler);
}

/**
 * Hands the library a well-formed empty request, with `error` for {@link rejectUndecodableBody} to
 * raise; the body sent is never read.
 */
function refuse(req: UniversalServerRequest, framing: Framing, handler: UniversalHandler, error: unknown): Promise<UniversalServerResponse> {
  const header = new Headers(req.header);
  header.delete(framing.encodingHeader);
  header.delete('content-length');
  const empty = framing.binary ? new Uint8Array(0) : new TextEncoder().encode('{}');
  const body = framing.enveloped ? envelope(empty) : empty;
  const contextValues = (req.contextValues ?? createContextValues()).set(undecodableBodyKey, error);
  return handler({ ...req, header, contextValues, body: oneChunk(body) });
}

/** A body of one chunk, already read: a plain async iterator (connect-es's createAsyncIterable is an async generator, about 1.5 % of the API's CPU per submit). */
function oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      let done = false;
      return {
        next: () => {
          if (done) return Promise.resolve({ done: true, value: undefined });
          done = true;
          return Promise.resolve({ done: false, value: bytes });
        },
      };
    },
  };
}

function envelope(data: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(5 + data.byteLength);
  new DataView(bytes.buffer).setUint32(1, data.byteLength);
  bytes.set(data, 5);
  return bytes;
}

/** A Connect unary body: decompresses under Content-Encoding and, for protobuf, decodes. */
async function checkMessage(bytes: Uint8Array, compression: Compression | null, binary: boolean, handler: UniversalHandler, encoding: string, limit: number): Promise<ConnectError | undefined> {
  let plain = bytes;
  if (compression !== null) {
    try {
      // zlib stops inflating at the limit: a small body that inflates past it is never held whole.
      plain = await compression.decompress(bytes, limit);
    } catch (error) {
      return decompressionProblem(error, 'request body', encoding, limit);
    }
  }
  return binary ? decodes(plain, handler) : jsonNumbers(plain, handler);
}

/** Enveloped messages: each complete, decompressed when flagged so, and decoded (protobuf). */
async function checkEnvelopes(bytes: Uint8Array, compression: Compression | null, binary: boolean, handler: UniversalHandler, encoding: string, limit: number): Promise<ConnectError | undefined> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  /** Inflated bytes left for the messages still to come: the limit holds for the whole request. */
  let budget = limit;
  for (let at = 0; at < bytes.byteLength;) {
    if (at + 5 > bytes.byteLength) return new ConnectError('request body ends inside a message envelope header', Code.InvalidArgument);
    const flags = bytes[at]!;
    const length = view.getUint32(at + 1);
    if (at + 5 + length > bytes.byteLength) {
      return new ConnectError(`request body ends inside a message: the envelope announces ${length} bytes, ${bytes.byteLength - at - 5} follow`, Code.InvalidArgument);
    }
    let data = bytes.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    // Other flags (end of stream, trailers) are the protocol's business; the library judges them.
    if ((flags & ~1) !== 0) continue;
    if ((flags & 1) === 1) {
      if (compression === null) return new ConnectError('a request message is flagged compressed but the request names no encoding', Code.InvalidArgument);
      try {
        data = await compression.decompress(data, budget);
      } catch (error) {
        return decompressionProblem(error, 'request message', encoding, limit);
      }
    }
    budget -= data.byteLength;
    if (budget < 0) return tooLarge(limit);
    const problem = binary ? decodes(data, handler) : jsonNumbers(data, handler);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function decodes(bytes: Uint8Array, handler: UniversalHandler): ConnectError | undefined {
  try {
    fromBinary(handler.method.input, bytes);
    return undefined;
  } catch (error) {
    return new ConnectError(`request body is not a ${handler.method.input.typeName} message: ${reasonOf(error)}`, Code.InvalidArgument);
  }
}

/** A JSON message whose number fields hold a non-decimal string (`"0x10"`), which protobuf-es would read as a number. */
function jsonNumbers(bytes: Uint8Array, handler: UniversalHandler): ConnectError | undefined {
  return nonDecimalNumber(handler.method.input, new TextDecoder().decode(bytes));
}

/** A body past the method's limit, as connect-es words it. */
function tooLarge(limit: number): ConnectError {
  return new ConnectError(`message is larger than configured readMaxBytes ${limit} after decompression`, Code.ResourceExhausted);
}

/** Inflating past the limit is resource_exhausted; anything else is a body that is not `encoding`. */
function decompressionProblem(error: unknown, what: string, encoding: string, limit: number): ConnectError {
  if (error instanceof ConnectError && error.code === Code.ResourceExhausted) return tooLarge(limit);
  return new ConnectError(`${what} is not valid ${encoding}: ${reasonOf(error)}`, Code.InvalidArgument);
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
