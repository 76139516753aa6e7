// PartnerService handlers: decode the request, call the partner allocation use case, encode the
// result. No rules live here; errors are thrown and mapped by the error interceptor.

import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { PartnerService } from '@mint/contract';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the PartnerService handlers need. */
export type PartnerServiceDeps = HandlerDeps;

/** The PartnerService implementation. */
export function createPartnerServiceHandlers(deps: PartnerServiceDeps): ServiceImpl<typeof PartnerService> {
  const { ctx, useCases } = deps;
  const actorOf = (context: HandlerContext) => ({ id: principalOf(context).actorId });
  const partnerOf = (context: HandlerContext) => {
    const p = principalOf(context);
    return { apiKeyId: p.apiKeyId, partnerId: p.partnerId };
  };
  return fromViews(PartnerService, {
    async createPartner(req, context) {
      return { ...(await useCases.createPartner(ctx, actorOf(context), valuesOf(req))), ok: true };
    },

    async grantPartnerKey(req, context) {
      const { restriction, ...v } = valuesOf(req);
      const granted = await useCases.grantPartnerKey(ctx, actorOf(context), {
        ...v,
        productId: restriction.case === 'productId' ? restriction.value : null,
        mintBatchId: restriction.case === 'mintBatchId' ? restriction.value : null,
      });
      return { ok: true, keyId: granted.keyId, apiKey: granted.apiKey };
    },

    async listPartners(req) {
      const partners = await useCases.listPartners(ctx, req.brandId);
      return { ok: true, partners: partners.map((p) => ({ ...p, partnerId: p.id })) };
    },

    async revokePartnerKey(req) {
      await useCases.revokePartnerKey(ctx, req.brandId, req.keyId);
      return { ok: true };
    },

    async allocateSerials(req, context) {
      const a = await useCases.allocateSerials(ctx, partnerOf(context), valuesOf(req));
      return { ...a, ok: true, serials: a.units.map((u) => ({ ...u, url: u.epc })) };
    },

    async returnUnusedSerials(req, context) {
      const p = principalOf(context);
      return { ok: true, move: await useCases.returnUnusedSerials(ctx, { id: p.actorId, partnerId: p.partnerId }, valuesOf(req)) };
    },

    async getPartnerAllocation(req, context) {
      const g = await useCases.getPartnerAllocation(ctx, partnerOf(context), req.brandId);
      return { ...g, ok: true };
    },
  });
}
