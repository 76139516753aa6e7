// The one response writer of every plain HTTP route.

import type { HttpRequest, HttpResponse } from './types.ts';

/** Extra response headers. */
export type Headers = Readonly<Record<string, string | number>>;

/**
 * Writes a whole response: status, content type, `cache-control: no-store` (unless `headers`
 * says otherwise), the headers, the length, and the body (none for HEAD).
 */
export function send(req: HttpRequest, res: HttpResponse, status: number, contentType: string, body: string | Uint8Array, headers?: Headers): void {
  res.statusCode = status;
  res.setHeader('content-type', contentType);
  res.setHeader('cache-control', 'no-store');
  if (headers !== undefined) for (const name in headers) res.setHeader(name, headers[name]!);
  res.setHeader('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

/** The JSON media type of every JSON answer. */
export const jsonType = 'application/json; charset=utf-8';

/** Writes `value` as a JSON response (see {@link send}). */
export function sendJson(req: HttpRequest, res: HttpResponse, status: number, value: unknown, headers?: Headers): void {
  send(req, res, status, jsonType, JSON.stringify(value), headers);
}

/** Writes a bodiless response (a redirect, a 405), with `content-length: 0`. */
export function sendEmpty(res: HttpResponse, status: number, headers?: Headers): void {
  res.statusCode = status;
  res.setHeader('cache-control', 'no-store');
  if (headers !== undefined) for (const name in headers) res.setHeader(name, headers[name]!);
  res.setHeader('content-length', 0);
  res.end();
}

/** A whole answer decided before it is written: status, media type and body (none: a bodiless answer such as a redirect), headers. */
export interface Answer {
  readonly status: number;
  readonly type?: string;
  readonly body?: string | Uint8Array;
  readonly headers: Headers;
}

/** Writes `answer` once it is known: with {@link send}, or {@link sendEmpty} when it has no body. */
export function sendAnswer(req: HttpRequest, res: HttpResponse, answer: Answer | Promise<Answer>): void | Promise<void> {
  if (answer instanceof Promise) return answer.then((a) => sendAnswer(req, res, a));
  if (answer.body === undefined) sendEmpty(res, answer.status, answer.headers);
  else send(req, res, answer.status, answer.type!, answer.body, answer.headers);
}
