// PartnerService handlers: decode the request, call the partner allocation use case, encode the
// result. No rules live here; errors are thrown and mapped by the error interceptor.

import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { PartnerService } from '@mint/contract';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';

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
      const { partnerId } = await useCases.createPartner(ctx, actorOf(context), { brandId: req.brandId, name: req.name });
      return { ok: true, partnerId };
    },

    async grantPartnerKey(req, context) {
      const { restriction } = req;
      const granted = await useCases.grantPartnerKey(ctx, actorOf(context), {
        brandId: req.brandId,
        partnerId: req.partnerId,
        name: req.name,
        quota: req.quota,
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
      const a = await useCases.allocateSerials(ctx, partnerOf(context), { brandId: req.brandId, quantity: req.quantity, idempotencyKey: req.idempotencyKey });
      return { ...a, ok: true, serials: a.units.map((u) => ({ ...u, url: u.epc })) };
    },

    async returnUnusedSerials(req, context) {
      const p = principalOf(context);
      const move = await useCases.returnUnusedSerials(
        ctx,
        { id: p.actorId, partnerId: p.partnerId },
        { brandId: req.brandId, idempotencyKey: req.idempotencyKey },
      );
      return { ok: true, move };
    },

    async getPartnerAllocation(req, context) {
      const g = await useCases.getPartnerAllocation(ctx, partnerOf(context), req.brandId);
      return { ...g, ok: true };
    },
  });
}
