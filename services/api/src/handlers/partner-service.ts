// PartnerService handlers: decode the request, call the partner allocation use case, encode the
// result. No rules live here; errors are thrown and mapped by the error interceptor.

import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { PartnerService } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { orUnset, toTimestamp, toWireMove } from './wire.ts';

/** The use cases PartnerService calls. */
export type PartnerUseCases = Pick<
  typeof UseCases,
  'createPartner' | 'grantPartnerKey' | 'listPartners' | 'revokePartnerKey' | 'allocateSerials' | 'returnUnusedSerials' | 'getPartnerAllocation'
>;

/** What the PartnerService handlers need. */
export type PartnerServiceDeps = HandlerDeps<PartnerUseCases>;

/** The PartnerService implementation. */
export function createPartnerServiceHandlers(deps: PartnerServiceDeps): ServiceImpl<typeof PartnerService> {
  const { ctx, useCases } = deps;
  const actorOf = (context: HandlerContext) => ({ id: principalOf(context).actorId });
  const partnerOf = (context: HandlerContext) => {
    const p = principalOf(context);
    return { apiKeyId: p.apiKeyId, partnerId: p.partnerId };
  };
  return {
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
      return {
        ok: true,
        partners: partners.map((p) => ({
          partnerId: p.id,
          name: p.name,
          createdAt: toTimestamp(p.createdAt),
          keys: p.keys.map((k) => ({
            keyId: k.keyId,
            name: k.name,
            prefix: k.prefix,
            productId: orUnset(k.productId),
            mintBatchId: orUnset(k.mintBatchId),
            quota: k.quota,
            allocated: k.allocated,
            createdAt: toTimestamp(k.createdAt),
            revokedAt: k.revokedAt === null ? undefined : toTimestamp(k.revokedAt),
          })),
        })),
      };
    },

    async revokePartnerKey(req) {
      await useCases.revokePartnerKey(ctx, req.brandId, req.keyId);
      return { ok: true };
    },

    async allocateSerials(req, context) {
      const a = await useCases.allocateSerials(ctx, partnerOf(context), { brandId: req.brandId, quantity: req.quantity, idempotencyKey: req.idempotencyKey });
      return {
        ok: true,
        requestId: a.requestId,
        quotaLeft: a.quotaLeft,
        replayed: a.replayed,
        serials: a.units.map((u) => ({ serial: u.serial, mintBatchId: u.mintBatchId, seq: u.seq, url: u.epc })),
      };
    },

    async returnUnusedSerials(req, context) {
      const p = principalOf(context);
      const move = await useCases.returnUnusedSerials(
        ctx,
        { id: p.actorId, partnerId: p.partnerId },
        { brandId: req.brandId, idempotencyKey: req.idempotencyKey },
      );
      return { ok: true, move: toWireMove(move) };
    },

    async getPartnerAllocation(req, context) {
      const g = await useCases.getPartnerAllocation(ctx, partnerOf(context), req.brandId);
      return {
        ok: true,
        partnerId: g.partnerId,
        partnerName: g.partnerName,
        keyId: g.keyId,
        productId: orUnset(g.productId),
        mintBatchId: orUnset(g.mintBatchId),
        quota: g.quota,
        allocated: g.allocated,
      };
    },
  };
}
