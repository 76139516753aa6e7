// Signed payload pack downloads: GET /downloads/{brand}/{pack}/payload-pack-{pack}.tar?exp=&kid=&sig=.
// Public path: the signature is the credential. Transport only; the check is the use case's.

import { pipeline } from 'node:stream/promises';
import parseRange from 'range-parser';
import type { Logger } from '@mint/runtime';
import type { ByteRange } from '@mint/store';
import { downloadPrefix, openPayloadPackDownload, type DownloadSettings, type UseCaseContext } from '@mint/usecases';
import { HttpProblem, jsonType, send, sendJson, type HttpRequest, type Route } from '@mint/http';

/** The one body of every refused download: expired, tampered, unknown key or malformed alike. */
export const refusedDownloadBody = JSON.stringify({ ok: false, error: 'forbidden', message: 'This download link is invalid or has expired.' });

/**
 * The byte range a request asks for: undefined for the whole archive (no `Range`, an `If-Range`
 * that no longer matches the pack's ETag, a malformed header, or several ranges, which are served
 * whole); an HttpProblem 416 when the one range lies beyond the archive.
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
 * The download route: checks the URL's signature (constant time) and streams the pack's tar
 * archive from the pack store, never holding it in memory. A single `Range` (optionally with
 * `If-Range` and the ETag) answers 206 with `Content-Range`, so a large pack can resume; a range
 * past the end answers 416. Refusals are logged with their reason and the path only; the query,
 * which holds the signature, is never logged.
 */
export function downloadRoute(ctx: UseCaseContext, settings: DownloadSettings, logger: Logger): Route {
  return {
    methods: ['GET', 'HEAD'],
    path: `${downloadPrefix}*`,
    handler: async ({ req, res, path, queryString }) => {
      const query = new URLSearchParams(queryString);
      const answer = await openPayloadPackDownload(ctx, settings, {
        method: req.method ?? 'GET',
        path,
        exp: query.get('exp'),
        kid: query.get('kid'),
        sig: query.get('sig'),
      });
      if (answer.kind === 'refused') {
        logger.info({ path, reason: answer.reason }, 'download refused');
        return send(req, res, 403, jsonType, refusedDownloadBody);
      }
      if (answer.kind === 'missing') return sendJson(req, res, 404, { ok: false, error: 'not_found', message: 'This payload pack is no longer available.' });
      res.setHeader('accept-ranges', 'bytes');
      res.setHeader('etag', answer.etag);
      res.setHeader('last-modified', answer.lastModified.toUTCString());
      res.setHeader('referrer-policy', 'no-referrer');
      let range: ByteRange | undefined;
      try {
        range = requestedRange(req, answer.size, answer.etag);
      } catch (problem) {
        res.setHeader('content-range', `bytes */${answer.size}`);
        throw problem;
      }
      res.statusCode = range === undefined ? 200 : 206;
      res.setHeader('content-type', 'application/x-tar');
      res.setHeader('content-length', range === undefined ? answer.size : range.end - range.start + 1);
      if (range !== undefined) res.setHeader('content-range', `bytes ${range.start}-${range.end}/${answer.size}`);
      res.setHeader('content-disposition', `attachment; filename="${answer.fileName}"`);
      res.setHeader('cache-control', 'no-store');
      if (req.method === 'HEAD') return void res.end();
      try {
        await pipeline(answer.stream(range), res as NodeJS.WritableStream);
      } catch (error) {
        logger.warn({ path, err: error }, 'download stream ended early');
        res.destroy();
      }
    },
  };
}
