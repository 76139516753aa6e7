// Request bodies and headers: bounded reading (413 past the limit), media types, JSON objects
// with clear messages.

import { InvalidInputError } from '@mint/domain';
import { HttpProblem } from './errors.ts';
import type { HttpRequest } from './types.ts';

/** Largest JSON body of a plain HTTP route (1 MiB). */
export const maxJsonBodyBytes = 1024 * 1024;

/** One header's value, null when absent; a repeated header is invalid input naming it. */
export function header(req: HttpRequest, name: string): string | null {
  const value = req.headers[name];
  if (Array.isArray(value)) {
    if (value.length > 1) throw new InvalidInputError([{ field: name, message: 'must be given once' }]);
    return value[0] ?? null;
  }
  return value === undefined ? null : value;
}

function tooLarge(limit: number): HttpProblem {
  return new HttpProblem(413, 'payload_too_large', `the request body exceeds ${limit} bytes`);
}

/**
 * The request body as a stream of chunks, failing with 413 payload_too_large as soon as more than
 * `limit` bytes arrived (or at once when Content-Length says so). Stops reading on failure.
 */
export async function* bodyChunks(req: HttpRequest, limit: number): AsyncGenerator<Uint8Array> {
  const declared = Number(header(req, 'content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.pause();
    throw tooLarge(limit);
  }
  let received = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    received += chunk.byteLength;
    if (received > limit) throw tooLarge(limit);
    yield chunk;
  }
}

/** Reads a whole body of at most `limit` bytes. */
export async function readBody(req: HttpRequest, limit: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of bodyChunks(req, limit)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The media type of the request without parameters, lowercased; '' when absent. */
export function mediaType(req: HttpRequest): string {
  return (header(req, 'content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Reads and parses a JSON object body: 415 unless the media type is JSON, 413 past the limit,
 * invalid input for text that is not JSON or a JSON value that is not an object.
 */
export async function readJsonObject(req: HttpRequest, limit = maxJsonBodyBytes): Promise<Record<string, unknown>> {
  const type = mediaType(req);
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpProblem(415, 'unsupported_media_type', 'the request body must be JSON (Content-Type: application/json)');
  }
  const text = (await readBody(req, limit)).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new InvalidInputError([{ field: 'body', message: `is not valid JSON (${(cause as Error).message})` }], { cause });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidInputError([{ field: 'body', message: 'must be a JSON object' }]);
  }
  return parsed as Record<string, unknown>;
}
