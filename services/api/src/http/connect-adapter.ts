// connect-node's adapter, with undecodable Connect binary requests answered as bad input.

import { fromBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createConnectRouter } from '@connectrpc/connect';
import {
  compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse,
  type ConnectNodeAdapterOptions,
} from '@connectrpc/connect-node';
import {
  createAsyncIterable, readAllBytes, uResponseNotFound,
  type UniversalHandler, type UniversalServerRequest, type UniversalServerResponse,
} from '@connectrpc/connect/protocol';
import type { HttpRequest, HttpResponse } from './listener.ts';

/** Largest request body any RPC reads (StartProductImport carries a CSV of up to 32 MiB). */
export const readMaxBytes = 40 * 1024 * 1024;

/**
 * Like `connectNodeAdapter`, with one correction: connect-es answers a Connect unary request whose
 * body does not decompress, or whose binary body does not decode, with `internal` (HTTP 500)
 * before any interceptor runs. Such a body is the client's mistake, so it is decompressed and
 * decoded here first and answered `invalid_argument` (HTTP 400) with the reason. The library then
 * gets the plain bytes; every other request goes to it untouched.
 */
export function connectAdapter(options: ConnectNodeAdapterOptions): (req: HttpRequest, res: HttpResponse) => void {
  const router = createConnectRouter({ acceptCompression: [compressionGzip, compressionBrotli], ...options, readMaxBytes });
  options.routes?.(router);
  const paths = new Map(router.handlers.map((handler) => [handler.requestPath, checkUnaryBody(handler)]));
  return (req, res) => {
    const handler = paths.get((req.url ?? '').split('?', 1)[0]!);
    if (!handler) {
      res.statusCode = uResponseNotFound.status;
      res.end();
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, options.contextValues?.(req));
    handler(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch(() => res.destroy());
  };
}

const compressions = [compressionGzip, compressionBrotli];

function checkUnaryBody(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const encoding = req.header.get('content-encoding') ?? 'identity';
    const compression = encoding === 'identity' ? null : compressions.find((c) => c.name === encoding);
    const unary = handler.method.methodKind === 'unary' && req.method === 'POST'
      && typeof req.body === 'object' && req.body !== null && Symbol.asyncIterator in req.body;
    // Unknown encodings are answered by the library itself (unimplemented, as the protocol says).
    if (!unary || compression === undefined) return handler(req);
    let bytes: Uint8Array;
    try {
      bytes = await readAllBytes(req.body as AsyncIterable<Uint8Array>, readMaxBytes, req.header.get('content-length'));
    } catch (error) {
      return errorResponse(ConnectError.from(error, Code.InvalidArgument));
    }
    const header = new Headers(req.header);
    if (compression !== null) {
      try {
        bytes = await compression.decompress(bytes, readMaxBytes);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return errorResponse(new ConnectError(`request body is not valid ${encoding}: ${reason}`, Code.InvalidArgument));
      }
      header.delete('content-encoding');
      header.delete('content-length');
    }
    if (header.get('content-type') === 'application/proto') {
      try {
        fromBinary(handler.method.input, bytes);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return errorResponse(new ConnectError(`request body is not a ${handler.method.input.typeName} message: ${reason}`, Code.InvalidArgument));
      }
    }
    return handler({ ...req, header, body: createAsyncIterable([bytes]) });
  };
  return Object.assign(wrapped, handler);
}

function errorResponse(error: ConnectError): UniversalServerResponse {
  const status = error.code === Code.ResourceExhausted ? 413 : 400;
  const body = new TextEncoder().encode(JSON.stringify({ code: Code[error.code].replace(/[A-Z]/g, (c, i: number) => (i ? '_' : '') + c.toLowerCase()), message: error.rawMessage }));
  return { status, header: new Headers({ 'content-type': 'application/json' }), body: createAsyncIterable([body]) };
}
