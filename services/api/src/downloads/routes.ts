// Signed payload pack downloads: GET /downloads/{brand}/{pack}/payload-pack-{pack}.tar?exp=&kid=&sig=.
// Public path: the signature is the credential. Transport only; the check is the use case's.

import { pipeline } from 'node:stream/promises';
import type { Logger } from '@mint/runtime';
import { downloadPrefix, openPayloadPackDownload, type DownloadSettings, type UseCaseContext } from '@mint/usecases';
import { jsonType, send, sendJson, type Route } from '@mint/http';

/** The one body of every refused download: expired, tampered, unknown key or malformed alike. */
export const refusedDownloadBody = JSON.stringify({ ok: false, error: 'forbidden', message: 'This download link is invalid or has expired.' });

/**
 * The download route: checks the URL's signature (constant time) and streams the pack's tar
 * archive. Refusals are logged with their reason and the path only; the query, which holds the
 * signature, is never logged.
 */
export function downloadRoute(ctx: UseCaseContext, settings: DownloadSettings, logger: Logger): Route {
  return {
    methods: ['GET', 'HEAD'],
    path: `${downloadPrefix}*`,
    handler: async ({ req, res, path, queryString }) => {
      const query = new URLSearchParams(queryString);
      const answer = await openPayloadPackDownload(ctx, settings, {
        method: req.method ?? 'GET', path, exp: query.get('exp'), kid: query.get('kid'), sig: query.get('sig'),
      });
      if (answer.kind === 'refused') {
        logger.info({ path, reason: answer.reason }, 'download refused');
        return send(req, res, 403, jsonType, refusedDownloadBody);
      }
      if (answer.kind === 'missing') return sendJson(req, res, 404, { ok: false, error: 'not_found', message: 'This payload pack is no longer available.' });
      res.statusCode = 200;
      res.setHeader('content-type', 'application/x-tar');
      res.setHeader('content-length', answer.size);
      res.setHeader('content-disposition', `attachment; filename="${answer.fileName}"`);
      res.setHeader('cache-control', 'no-store');
      res.setHeader('referrer-policy', 'no-referrer');
      if (req.method === 'HEAD') return void res.end();
      try {
        await pipeline(answer.stream(), res as NodeJS.WritableStream);
      } catch (error) {
        logger.warn({ path, err: error }, 'download stream ended early');
        res.destroy();
      }
    },
  };
}
