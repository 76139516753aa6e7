// Signed payload pack downloads: GET /downloads/{brand}/{pack}/payload-pack-{pack}.tar?exp=&kid=&sig=.
// Public path: the signature is the credential. Transport only; the check is the use case's.

import type { Logger } from '@mint/runtime';
import { downloadPrefix, openPayloadPackDownload, type DownloadSettings, type UseCaseContext } from '@mint/usecases';
import { jsonType, send, sendJson, sendStoredFile, type Route } from '@mint/http';

/** The one body of every refused download: expired, tampered, unknown key or malformed alike. */
export const refusedDownloadBody = JSON.stringify({ ok: false, error: 'forbidden', message: 'This download link is invalid or has expired.' });

/**
 * The download route: checks the URL's signature (constant time) and streams the pack's tar
 * archive from the pack store (`sendStoredFile`: never held in memory, a single `Range` answered
 * 206 so a large pack can resume, a range past the end 416). Refusals are logged with their
 * reason and the path only; the query, which holds the signature, is never logged.
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
      const file = { ...answer, contentType: 'application/x-tar' };
      await sendStoredFile(req, res, file, { 'referrer-policy': 'no-referrer' }, (err) => logger.warn({ path, err }, 'download stream ended early'));
    },
  };
}
