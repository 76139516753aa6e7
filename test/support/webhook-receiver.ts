// A real webhook receiver for tests and benchmarks: node:http on loopback, recording every
// request (headers, body, time) and answering what the test's handler decides.

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** performance.now() when the request's body had arrived. */
  readonly at: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` + path. */
  url(path?: string): string;
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Requests being answered right now, and the most at once so far. */
  inFlight(): { now: number; max: number };
  close(): Promise<void>;
}

/** What to answer: a status, optionally headers; may take its time. */
export type ReceiverHandler = (request: ReceivedWebhook, res: ServerResponse) => number | void | Promise<number | void>;

/** Starts a receiver on 127.0.0.1 answering with `handler` (200 by default). */
export async function startWebhookReceiver(handler: ReceiverHandler = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let connections = 0;
  let now = 0;
  let max = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
      received.push(request);
      now++;
      max = Math.max(max, now);
      void Promise.resolve(handler(request, res)).then(
        (status) => {
          now--;
          if (res.headersSent || res.writableEnded) return;
          res.statusCode = typeof status === 'number' ? status : 200;
          res.end('ok');
        },
        () => {
          now--;
          res.statusCode = 500;
          res.end();
        },
      );
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    connections: () => connections,
    inFlight: () => ({ now, max }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
