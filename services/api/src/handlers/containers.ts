// MintService's aggregation handlers (SetContainerSettings, MintContainers, PackContainer,
// UnpackContainer, GetContainer): decode, call the use case, encode. No rules live here.

import type { ServiceImpl } from '@connectrpc/connect';
import { MintService } from '@mint/contract';
import { actorOf, principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { valuesOf } from '@mint/wire';

type ContainerHandlers = Pick<
  ServiceImpl<typeof MintService>,
  'setContainerSettings' | 'mintContainers' | 'packContainer' | 'unpackContainer' | 'getContainer'
>;

/** The aggregation RPCs of MintService on `deps`. */
export function createContainerHandlers(deps: HandlerDeps): ContainerHandlers {
  const { ctx, useCases } = deps;
  return fromViews(MintService, {
    async setContainerSettings(req, context) {
      const v = valuesOf(req);
      const s = await useCases.setContainerSettings(ctx, actorOf(context), { ...v, companyPrefix: v.gs1CompanyPrefix });
      return { ok: true, gs1CompanyPrefix: s.companyPrefix, maxDepth: s.maxDepth };
    },
    async mintContainers(req, context) {
      return { ...(await useCases.mintContainers(ctx, actorOf(context), valuesOf(req))), ok: true };
    },
    async packContainer(req, context) {
      return { ...(await useCases.packContainer(ctx, actorOf(context), valuesOf(req))), ok: true };
    },
    async unpackContainer(req, context) {
      return { ...(await useCases.unpackContainer(ctx, actorOf(context), valuesOf(req))), ok: true };
    },
    async getContainer(req, context) {
      const { container: c, contents } = await useCases.getContainer(ctx, req.brandId, req.sscc, valuesOf(req), principalOf(context).partnerId);
      return { ok: true, container: c, containers: contents.containers, units: contents.units, nextCursor: contents.nextCursor };
    },
  });
}
