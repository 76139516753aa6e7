// The request and response objects of Node's HTTP/1.1 and HTTP/2 compatibility APIs.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/** A request of either HTTP version. */
export type HttpRequest = IncomingMessage | Http2ServerRequest;
/** A response of either HTTP version. */
export type HttpResponse = ServerResponse | Http2ServerResponse;
