// connect-node's adapter, with credentials checked from the headers before any body byte is read,
// per-operation body limits on inflated bytes, undecodable request bodies answered as bad input in
// every protocol, the spec's spellings of enum values read in JSON, and the library's bodiless
// refusals (404, 405, 415, 505) answered with the plain JSON error body.

import { fromBinary, type DescMethod } from '@bufbuild/protobuf';
import { Code, ConnectError, createConnectRouter, createContextKey, createContextValues, type ContextValues, type Interceptor } from '@connectrpc/connect';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
  type ConnectNodeAdapterOptions,
} from '@connectrpc/connect-node';
import {
  readAllBytes,
  uResponseNotFound,
  type Compression,
  type UniversalHandler,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from '@connectrpc/connect/protocol';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpError } from '../errors.ts';
import { sendHttpError } from '../router.ts';
import type { HttpRequest, HttpResponse } from '../types.ts';
import { respellEnums, type EnumSpellings } from './json-enums.ts';
import { nonDecimalNumber } from './json-numbers.ts';

/** Largest request body any RPC reads (StartProductImport carries a CSV of up to 32 MiB). */
const readMaxBytes = 40 * 1024 * 1024;

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
  /** The full names of the services registered (`mint.v1.MintService`), in registration order. */
  readonly services: readonly string[];
}

/** Options of {@link connectAdapter} beside connect-node's own. */
export interface ConnectAdapterOptions extends ConnectNodeAdapterOptions {
  readonly body?: BodyPolicy;
  /** The message of the 404 answered for a path that names no RPC (what the server does serve); a plain one when absent. */
  readonly notFoundMessage?: (path: string) => string;
  /** The spec's spellings of enum values, accepted in JSON requests besides the proto names (see {@link respellEnums}). */
  readonly enumSpellings?: EnumSpellings;
}

/**
 * What the adapter answers itself, in the plain JSON error body ({@link sendHttpError}) with a
 * message naming what to change: a path that names no RPC (404), and the three answers connect-es
 * gives without a body, before any protocol is chosen: a method the RPC is not called with (405,
 * with `Allow`), a missing or unsupported `Content-Type` (415, naming the accepted ones) and a
 * bidirectional stream over HTTP/1.1 (505).
 */
export function connectAdapter(options: ConnectAdapterOptions): ConnectAdapter {
  const router = createConnectRouter({ acceptCompression: [...compressions], ...options, readMaxBytes });
  options.routes?.(router);
  const policy: BodyPolicy = options.body ?? { maxBodyBytes: () => readMaxBytes };
  const spellings = options.enumSpellings ?? new Map();
  const paths = new Map(router.handlers.map((handler) => [handler.requestPath, checkBody(handler, policy, spellings)]));
  const serve = (req: HttpRequest, res: HttpResponse): void => {
    const path = (req.url ?? '').split('?', 1)[0]!;
    const handler = paths.get(path);
    if (!handler) {
      const message = options.notFoundMessage?.(path) ?? `no RPC at ${path}`;
      answerPlain(req, res, path, { status: uResponseNotFound.status, code: 'not_found', message });
      return;
    }
    const contextValues = options.contextValues?.(req);
    const uReq = 'stream' in req ? universalRequestFromNodeRequest(req, res, undefined, contextValues) : h1Request(req, res as ServerResponse, contextValues);
    handler(uReq)
      .then((uRes) => {
        const problem = uRes.body === undefined ? protocolProblem(handler, uReq, uRes.status) : undefined;
        if (problem === undefined) return universalResponseToNodeResponse(uRes, res);
        uRes.header?.forEach((value, name) => {
          res.setHeader(name, value);
        });
        if (problem.status === 405) res.setHeader('allow', handler.allowedMethods.join(', '));
        answerPlain(req, res, path, problem);
      })
      .catch(() => res.destroy());
  };
  const services = [...new Set(router.handlers.map((handler) => handler.service.typeName))];
  return Object.assign(serve, { serves: (path: string) => paths.has(path), services });
}

/** Writes `error` in the plain JSON error body, as the route table's default error writer does. */
function answerPlain(req: HttpRequest, res: HttpResponse, path: string, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendHttpError({ req, res, path, params: {}, queryString: '' }, error, undefined);
}

/** The content types of each protocol, as a caller would write them. */
const unaryContentTypes =
  'application/json or application/proto (Connect), application/grpc[+proto|+json] (gRPC), application/grpc-web[+proto|+json] (gRPC-Web)';
const streamContentTypes =
  'application/connect+json or application/connect+proto (Connect), application/grpc[+proto|+json] (gRPC), application/grpc-web[+proto|+json] (gRPC-Web)';

/**
 * The plain error of a bodiless refusal connect-es gave before choosing a protocol (405, 415 or
 * 505), naming what to change; undefined for any other answer, which goes out as the library wrote it.
 */
function protocolProblem(handler: UniversalHandler, req: UniversalServerRequest, status: number): HttpError | undefined {
  const rpc = `${handler.service.typeName}/${handler.method.name}`;
  switch (status) {
    case 405:
      return { status, code: 'method_not_allowed', message: `${req.method} is not allowed on ${rpc}: call it with ${handler.allowedMethods.join(' or ')}` };
    case 415: {
      const sent = req.header.get('content-type');
      const accepted = handler.method.methodKind === 'unary' ? unaryContentTypes : streamContentTypes;
      const what = sent === null || sent === '' ? 'the request has no Content-Type' : `Content-Type ${JSON.stringify(sent)} is not accepted`;
      return { status, code: 'unsupported_media_type', message: `${what}: ${rpc} takes ${accepted}` };
    }
    case 505:
      return { status, code: 'http_version_not_supported', message: `${rpc} is a bidirectional stream: call it over HTTP/2` };
    default:
      return undefined;
  }
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
    case 'application/proto':
      return { enveloped: false, encodingHeader: 'content-encoding', binary: true };
    case 'application/json':
      return { enveloped: false, encodingHeader: 'content-encoding', binary: false };
    case 'application/connect+proto':
      return { enveloped: true, encodingHeader: 'connect-content-encoding', binary: true };
    case 'application/connect+json':
      return { enveloped: true, encodingHeader: 'connect-content-encoding', binary: false };
    case 'application/grpc':
    case 'application/grpc+proto':
    case 'application/grpc-web':
    case 'application/grpc-web+proto':
      return { enveloped: true, encodingHeader: 'grpc-encoding', binary: true };
    case 'application/grpc+json':
    case 'application/grpc-web+json':
      return { enveloped: true, encodingHeader: 'grpc-encoding', binary: false };
    // Anything else (gRPC-Web text, unsupported types) is the library's to answer.
    default:
      return undefined;
  }
}

/**
 * `handler`, with the body of a unary or server-streaming POST read and checked first: the
 * policy's header check runs before any byte is read, then at most the method's limit is read
 * and, when compressed, inflated.
 */
function checkBody(handler: UniversalHandler, policy: BodyPolicy, spellings: EnumSpellings): UniversalHandler {
  const kind = handler.method.methodKind;
  if (kind !== 'unary' && kind !== 'server_streaming') return handler;
  const limit = policy.maxBodyBytes(handler.method);
  const wrapped = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const framing = framingOf(req.header.get('content-type'));
    const readable = req.method === 'POST' && typeof req.body === 'object' && req.body !== null && Symbol.asyncIterator in req.body;
    if (framing === undefined || !readable) return handler(req);
    if (policy.beforeBody !== undefined) {
      try {
        await policy.beforeBody(handler.method, req.header, (req.contextValues ??= createContextValues()));
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
    const body = { compression, binary: framing.binary, handler, encoding, limit, spellings };
    const checked = framing.enveloped ? await checkEnvelopes(bytes, body) : await checkMessage(bytes, body);
    if (checked instanceof ConnectError) return refuse(req, framing, handler, checked);
    if (checked === undefined) return handler({ ...req, body: oneChunk(bytes) });
    // A JSON body with enum values respelt: its messages now travel uncompressed.
    const header = new Headers(req.header);
    if (!framing.enveloped) header.delete(framing.encodingHeader);
    header.delete('content-length');
    return handler({ ...req, header, body: oneChunk(checked) });
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

/** How a request body is checked: its compression, encoding and limit, and what its JSON may spell differently. */
interface BodyCheck {
  readonly compression: Compression | null;
  readonly binary: boolean;
  readonly handler: UniversalHandler;
  readonly encoding: string;
  readonly limit: number;
  readonly spellings: EnumSpellings;
}

/**
 * What checking a body found: a refusal, the body to pass on instead (JSON whose enum values were
 * respelt, uncompressed), or undefined when the body goes on as it came.
 */
type Checked = ConnectError | Uint8Array | undefined;

/** A Connect unary body: decompresses under Content-Encoding and, for protobuf, decodes. */
async function checkMessage(bytes: Uint8Array, check: BodyCheck): Promise<Checked> {
  let plain = bytes;
  if (check.compression !== null) {
    try {
      // zlib stops inflating at the limit: a small body that inflates past it is never held whole.
      plain = await check.compression.decompress(bytes, check.limit);
    } catch (error) {
      return decompressionProblem(error, 'request body', check.encoding, check.limit);
    }
  }
  return check.binary ? decodes(plain, check.handler) : checkJson(plain, check);
}

/** Enveloped messages: each complete, decompressed when flagged so, and decoded (protobuf). */
async function checkEnvelopes(bytes: Uint8Array, check: BodyCheck): Promise<Checked> {
  const { compression, encoding, limit } = check;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  /** Inflated bytes left for the messages still to come: the limit holds for the whole request. */
  let budget = limit;
  /** The envelopes to pass on, once a JSON message was respelt (undefined while none was). */
  let rewritten: Uint8Array[] | undefined;
  for (let at = 0; at < bytes.byteLength; ) {
    if (at + 5 > bytes.byteLength) return new ConnectError('request body ends inside a message envelope header', Code.InvalidArgument);
    const start = at;
    const flags = bytes[at]!;
    const length = view.getUint32(at + 1);
    if (at + 5 + length > bytes.byteLength) {
      return new ConnectError(
        `request body ends inside a message: the envelope announces ${length} bytes, ${bytes.byteLength - at - 5} follow`,
        Code.InvalidArgument,
      );
    }
    let data = bytes.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    // Other flags (end of stream, trailers) are the protocol's business; the library judges them.
    if ((flags & ~1) !== 0) {
      rewritten?.push(bytes.subarray(start, at));
      continue;
    }
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
    const checked = check.binary ? decodes(data, check.handler) : checkJson(data, check);
    if (checked instanceof ConnectError) return checked;
    if (checked !== undefined) rewritten ??= start === 0 ? [] : [bytes.subarray(0, start)];
    rewritten?.push(checked === undefined ? bytes.subarray(start, at) : envelope(checked));
  }
  return rewritten === undefined ? undefined : Buffer.concat(rewritten);
}

function decodes(bytes: Uint8Array, handler: UniversalHandler): ConnectError | undefined {
  try {
    fromBinary(handler.method.input, bytes);
    return undefined;
  } catch (error) {
    return new ConnectError(`request body is not a ${handler.method.input.typeName} message: ${reasonOf(error)}`, Code.InvalidArgument);
  }
}

/**
 * A JSON message: refused when a number field holds a non-decimal string (`"0x10"`, which
 * protobuf-es would read as a number) or an enum field a string that names no value; re-encoded
 * when an enum value was written in the spec's spelling (`"serial"`). Undefined when it goes on as
 * it came (also when it is not JSON at all: the library reports that).
 */
function checkJson(bytes: Uint8Array, check: BodyCheck): Checked {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
  const schema = check.handler.method.input;
  const numbers = nonDecimalNumber(schema, value);
  if (numbers !== undefined) return numbers;
  const spelt = respellEnums(schema, value, check.spellings);
  if (spelt instanceof ConnectError) return spelt;
  return spelt.changed ? new TextEncoder().encode(JSON.stringify(value)) : undefined;
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
