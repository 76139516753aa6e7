// Signed payload pack downloads: GET /downloads/{brand}/{pack}/payload-pack-{pack}.tar?exp=&kid=&sig=.
// Public path: the signature is the credential. Transport only; the check is the use case's.

import { pipeline } from 'node:stream/promises';
import type { Logger } from '@mint/runtime';
import { downloadPrefix, openPayloadPackDownload, type DownloadSettings, type UseCaseContext } from '@mint/usecases';
import type { HttpRequest, HttpResponse, HttpRoutes } from '../server.ts';

/** The one body of every refused download: expired, tampered, unknown key or malformed alike. */
export const refusedDownloadBody = JSON.stringify({ ok: false, error: 'forbidden', message: 'This download link is invalid or has expired.' });

function send(req: HttpRequest, res: HttpResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', Buffer.byteLength(body));
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

/**
 * The download routes: checks the URL's signature (constant time) and streams the pack's tar
 * archive. Refusals are logged with their reason and the path only; the query, which holds the
 * signature, is never logged.
 */
export function createDownloadRoutes(ctx: UseCaseContext, settings: DownloadSettings, logger: Logger): HttpRoutes {
  return async (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(downloadPrefix)) return false;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(req, res, 405, '{"ok":false,"error":"method_not_allowed"}');
      return true;
    }
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const answer = await openPayloadPackDownload(ctx, settings, {
      method: req.method, path, exp: query.get('exp'), kid: query.get('kid'), sig: query.get('sig'),
    });
    if (answer.kind === 'refused') {
      logger.info({ path, reason: answer.reason }, 'download refused');
      send(req, res, 403, refusedDownloadBody);
      return true;
    }
    if (answer.kind === 'missing') {
      send(req, res, 404, '{"ok":false,"error":"not_found","message":"This payload pack is no longer available."}');
      return true;
    }
    res.statusCode = 200;
    res.setHeader('content-type', 'application/x-tar');
    res.setHeader('content-length', answer.size);
    res.setHeader('content-disposition', `attachment; filename="${answer.fileName}"`);
    res.setHeader('cache-control', 'no-store');
    res.setHeader('referrer-policy', 'no-referrer');
    if (req.method === 'HEAD') {
      res.end();
      return true;
    }
    try {
      await pipeline(answer.stream(), res as NodeJS.WritableStream);
    } catch (error) {
      logger.warn({ path, err: error }, 'download stream ended early');
      res.destroy();
    }
    return true;
  };
}
