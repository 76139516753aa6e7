// Request and response plumbing of the /v1 routes: bounded body reading (413 past the limit),
// JSON parsing with clear messages, strict field checking (unknown fields are rejected by name),
// and JSON responses.

import { InvalidInputError, isUuid, type FieldViolation } from '@mint/domain';
import type { HttpRequest, HttpResponse } from '../server.ts';
import { HttpProblem } from './errors.ts';

/** Largest JSON body of a /v1 route (1 MiB). */
export const maxJsonBodyBytes = 1024 * 1024;

/** The request id the server assigned (echoed in `x-request-id`). */
export function requestIdOf(res: HttpResponse): string {
  const id = res.getHeader('x-request-id');
  return typeof id === 'string' ? id : '';
}

/** One header's value; a repeated header is invalid input naming it. */
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
 * invalid_request for text that is not JSON or a JSON value that is not an object.
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

/** The type of one field of a request. */
export type FieldType = 'uuid' | 'string' | 'integer' | 'timestamp' | 'lots' | 'any';

/** How one field of a request is checked. */
export interface FieldSpec {
  readonly type: FieldType;
  /** Absent or null is invalid. */
  readonly required?: boolean;
  /** Allowed values of a string field. */
  readonly values?: readonly string[];
  /** Largest length of a string field. */
  readonly maxLength?: number;
}

/** The checked fields of a request; absent fields are null. Lots become `{lotCode, qty}`. */
export type Fields = Record<string, unknown>;

/**
 * Checks an object against `spec`: every unknown field, missing required field and wrong type is
 * reported (all at once, each named by its path) as one InvalidInputError. Integers must be JSON
 * integers; timestamps ISO 8601 strings; uuids textual uuids.
 */
export function checkFields(input: Record<string, unknown>, spec: Readonly<Record<string, FieldSpec>>, prefix = ''): Fields {
  const v: FieldViolation[] = [];
  const out: Fields = {};
  for (const name of Object.keys(input)) {
    if (!(name in spec)) v.push({ field: prefix + name, message: `is not a known field; allowed: ${Object.keys(spec).join(', ')}` });
  }
  for (const [name, field] of Object.entries(spec)) {
    const value = input[name];
    const path = prefix + name;
    if (value === undefined || value === null) {
      if (field.required) v.push({ field: path, message: 'is required' });
      out[name] = null;
      continue;
    }
    const checked = checkValue(value, field, path, v);
    out[name] = checked;
  }
  if (v.length > 0) throw new InvalidInputError(v);
  return out;
}

function checkValue(value: unknown, field: FieldSpec, path: string, v: FieldViolation[]): unknown {
  switch (field.type) {
    case 'any':
      return value;
    case 'uuid':
      if (!isUuid(value)) v.push({ field: path, message: 'must be a uuid string' });
      return value;
    case 'string':
      if (typeof value !== 'string') v.push({ field: path, message: 'must be a string' });
      else if (value.includes('\u0000')) v.push({ field: path, message: 'must not contain the NUL character (U+0000)' });
      else if (field.values && !field.values.includes(value)) v.push({ field: path, message: `must be one of ${field.values.join(', ')}` });
      else if (field.maxLength !== undefined && value.length > field.maxLength) v.push({ field: path, message: `must be at most ${field.maxLength} characters` });
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) v.push({ field: path, message: 'must be an integer' });
      return value;
    case 'timestamp': {
      const date = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(value) : null;
      if (date === null || Number.isNaN(date.getTime())) {
        v.push({ field: path, message: 'must be an ISO 8601 timestamp' });
        return null;
      }
      return date;
    }
    case 'lots': {
      if (!Array.isArray(value)) {
        v.push({ field: path, message: 'must be an array of {lot_code, qty}' });
        return [];
      }
      return value.map((lot: unknown, i) => {
        const at = `${path}[${i}]`;
        if (lot === null || typeof lot !== 'object' || Array.isArray(lot)) {
          v.push({ field: at, message: 'must be an object {lot_code, qty}' });
          return { lotCode: '', qty: 0 };
        }
        try {
          const f = checkFields(lot as Record<string, unknown>, lotSpec, `${at}.`);
          return { lotCode: f['lot_code'] as string, qty: f['qty'] as number };
        } catch (error) {
          if (error instanceof InvalidInputError) v.push(...error.violations);
          return { lotCode: '', qty: 0 };
        }
      });
    }
  }
}

const lotSpec: Record<string, FieldSpec> = { lot_code: { type: 'string', required: true }, qty: { type: 'integer', required: true } };

/** Writes a JSON response with `no-store` caching. */
export function sendJson(res: HttpResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** ISO 8601 text of a time, or null. */
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
