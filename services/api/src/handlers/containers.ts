// MintService's aggregation handlers (SetContainerSettings, MintContainers, PackContainer,
// UnpackContainer, GetContainer): decode, call the use case, encode. No rules live here.

import type { ServiceImpl } from '@connectrpc/connect';
import { MintService, type PackContainerRequest, type UnpackContainerRequest } from '@mint/contract';
import { actorOf, principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { orNull } from '@mint/wire';

type ContainerHandlers = Pick<
  ServiceImpl<typeof MintService>,
  'setContainerSettings' | 'mintContainers' | 'packContainer' | 'unpackContainer' | 'getContainer'
>;

/** The aggregation RPCs of MintService on `deps`. */
export function createContainerHandlers(deps: HandlerDeps): ContainerHandlers {
  const { ctx, useCases } = deps;
  const itemsOf = (req: PackContainerRequest | UnpackContainerRequest) => ({
    brandId: req.brandId,
    sscc: req.sscc,
    serials: req.serials,
    ssccs: req.ssccs,
    idempotencyKey: req.idempotencyKey,
  });
  return fromViews(MintService, {
    async setContainerSettings(req, context) {
      const s = await useCases.setContainerSettings(ctx, actorOf(context), {
        brandId: req.brandId,
        companyPrefix: orNull(req.gs1CompanyPrefix),
        maxDepth: orNull(req.maxDepth),
      });
      return { ok: true, gs1CompanyPrefix: s.companyPrefix, maxDepth: s.maxDepth };
    },
    async mintContainers(req, context) {
      const m = await useCases.mintContainers(ctx, actorOf(context), {
        brandId: req.brandId,
        level: req.level,
        count: req.count,
        extensionDigit: req.extensionDigit,
        idempotencyKey: req.idempotencyKey,
      });
      return { ...m, ok: true };
    },
    async packContainer(req, context) {
      return { ...(await useCases.packContainer(ctx, actorOf(context), itemsOf(req))), ok: true };
    },
    async unpackContainer(req, context) {
      return { ...(await useCases.unpackContainer(ctx, actorOf(context), itemsOf(req))), ok: true };
    },
    async getContainer(req, context) {
      const { container: c, contents } = await useCases.getContainer(
        ctx,
        req.brandId,
        req.sscc,
        { limit: orNull(req.limit), cursor: orNull(req.cursor) },
        principalOf(context).partnerId,
      );
      return { ok: true, container: c, containers: contents.containers, units: contents.units, nextCursor: contents.nextCursor };
    },
  });
}
