// A stored file sent as a download: streamed (never held in memory) with its validators, and one
// byte range of it on request, so a large file can resume.

import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import parseRange from 'range-parser';
import { HttpProblem } from './errors.ts';
import type { Headers } from './respond.ts';
import type { HttpRequest, HttpResponse } from './types.ts';

/** Bytes `start` to `end` of a file, both included. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** A file to send: its name, media type, size, validators and bytes. */
export interface StoredFile {
  readonly fileName: string;
  readonly contentType: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModified: Date;
  /** The whole file, or only bytes `range` of it. */
  readonly stream: (range?: ByteRange) => Readable;
}

/**
 * The byte range a request asks for: undefined for the whole file (no `Range`, an `If-Range`
 * that no longer matches the ETag, a malformed header, or several ranges, which are served
 * whole); an HttpProblem 416 when the one range lies beyond the file.
 */
function requestedRange(req: HttpRequest, size: number, etag: string): ByteRange | undefined {
  const header = req.headers.range;
  if (header === undefined) return undefined;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const ranges = parseRange(size, header);
  if (ranges === -1) throw new HttpProblem(416, 'range_not_satisfiable', `The requested range is not within the ${size} bytes of this download.`);
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0]!.start, end: ranges[0]!.end };
}

/**
 * Sends `file` as an attachment with its ETag and Last-Modified, never stored by a cache, with
 * `headers`: 200 whole, or 206 with `Content-Range` for a single `Range` (optionally with
 * `If-Range` and the ETag); a range past the end throws the 416 (with `Content-Range: bytes
 * *\/size`). A stream that fails once the answer started destroys the response and is passed to
 * `onBrokenStream`.
 */
export async function sendStoredFile(
  req: HttpRequest,
  res: HttpResponse,
  file: StoredFile,
  headers: Headers,
  onBrokenStream: (err: unknown) => void,
): Promise<void> {
  res.setHeader('accept-ranges', 'bytes');
  res.setHeader('etag', file.etag);
  res.setHeader('last-modified', file.lastModified.toUTCString());
  for (const name in headers) res.setHeader(name, headers[name]!);
  let range: ByteRange | undefined;
  try {
    range = requestedRange(req, file.size, file.etag);
  } catch (problem) {
    res.setHeader('content-range', `bytes */${file.size}`);
    throw problem;
  }
  res.statusCode = range === undefined ? 200 : 206;
  res.setHeader('content-type', file.contentType);
  res.setHeader('content-length', range === undefined ? file.size : range.end - range.start + 1);
  if (range !== undefined) res.setHeader('content-range', `bytes ${range.start}-${range.end}/${file.size}`);
  res.setHeader('content-disposition', `attachment; filename="${file.fileName}"`);
  res.setHeader('cache-control', 'no-store');
  if (req.method === 'HEAD') return void res.end();
  try {
    await pipeline(file.stream(range), res as NodeJS.WritableStream);
  } catch (error) {
    onBrokenStream(error);
    res.destroy();
  }
}
