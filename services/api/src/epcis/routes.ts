// The EPCIS 2.0 interface of the brand's serials: `GET /epcis/events` (the standard's REST query
// subset: EQ_bizStep, EQ_disposition, MATCH_epc, GE_eventTime, LT_eventTime, perPage,
// nextPageToken) and `POST /epcis/capture` (an EPCIS 2.0 document applied all or nothing).
// Authenticated by a session or an API key (a partner's key too: it captures about its own
// allocation and containers and queries its own events); the brand is `x-workspace-id`. Transport
// only: the rules live in the use cases.

import { InvalidInputError, isUuid, type Permission } from '@mint/domain';
import { header, readJsonObject, sendJson, type HttpRequest, type Route } from '@mint/http';
import * as useCases from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { sendErrorBody as onError } from '../v1/errors.ts';

/** Largest capture document, in bytes. */
const maxCaptureBytes = 16 * 1024 * 1024;

async function callerOf(
  ctx: useCases.UseCaseContext,
  req: HttpRequest,
  permission: Permission,
): Promise<{ brandId: string; actorId: string; partnerId: string | null }> {
  const authenticated = await useCases.authenticate(ctx, credentialsFrom(req.headers));
  const brandId = header(req, 'x-workspace-id');
  if (brandId === null || !isUuid(brandId)) throw new InvalidInputError([{ field: 'x-workspace-id', message: 'must be the brand (workspace) id, a uuid' }]);
  const caller = await useCases.authorizeAuthenticated(ctx, authenticated, brandId, permission, { partnerAccess: true });
  return { brandId, actorId: caller.actorId, partnerId: caller.partnerId };
}

/** The EPCIS routes on `ctx`. */
export function epcisRoutes(ctx: useCases.UseCaseContext): Route[] {
  return [
    {
      methods: ['GET'],
      path: '/epcis/events',
      onError,
      handler: async (call) => {
        const { brandId, partnerId } = await callerOf(ctx, call.req, 'mint:read');
        const page = await useCases.queryEpcis(ctx, brandId, new URLSearchParams(call.queryString), partnerId);
        const headers: Record<string, string> = { 'gs1-epcis-version': '2.0.0', 'gs1-cbv-version': '2.0.0' };
        if (page.nextPageToken !== null) {
          const next = new URLSearchParams(call.queryString);
          next.set('nextPageToken', page.nextPageToken);
          headers['link'] = `</epcis/events?${next.toString()}>; rel="next"`;
        }
        sendJson(call.req, call.res, 200, page.document, headers);
      },
    },
    {
      methods: ['POST'],
      path: '/epcis/capture',
      onError,
      handler: async (call) => {
        const { brandId, actorId, partnerId } = await callerOf(ctx, call.req, 'mint:write');
        const document = await readJsonObject(call.req, maxCaptureBytes);
        const result = await useCases.captureEpcisDocument(ctx, { id: actorId, partnerId }, brandId, document);
        sendJson(call.req, call.res, 200, { ok: true, captured: result.captured, replayed: result.replayed, moved: result.moved });
      },
    },
  ];
}
