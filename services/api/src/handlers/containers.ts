// MintService's aggregation handlers (SetContainerSettings, MintContainers, PackContainer,
// UnpackContainer, GetContainer): decode, call the use case, encode. No rules live here.

import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { MintService, PackContainerRequest, UnpackContainerRequest } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { decommissionReason, orNull, orUnset, toTimestamp } from './wire.ts';

/** The use cases the aggregation handlers call. */
export type ContainerUseCases = Pick<typeof UseCases, 'setContainerSettings' | 'mintContainers' | 'packContainer' | 'unpackContainer' | 'getContainer'>;

type ContainerHandlers = Pick<
  ServiceImpl<typeof MintService>,
  'setContainerSettings' | 'mintContainers' | 'packContainer' | 'unpackContainer' | 'getContainer'
>;

/** The aggregation RPCs of MintService on `deps`. */
export function createContainerHandlers(deps: HandlerDeps<ContainerUseCases>): ContainerHandlers {
  const { ctx, useCases } = deps;
  const actorOf = (context: HandlerContext) => ({ id: principalOf(context).actorId, partnerId: principalOf(context).partnerId });
  const itemsOf = (req: PackContainerRequest | UnpackContainerRequest) => ({
    brandId: req.brandId,
    sscc: req.sscc,
    serials: req.serials,
    ssccs: req.ssccs,
    idempotencyKey: req.idempotencyKey,
  });
  const result = (r: UseCases.ContainerOpResult) => ({ ok: true, opId: r.opId, sscc: r.sscc, units: r.units, containers: r.containers, replayed: r.replayed });
  return {
    async setContainerSettings(req, context) {
      const s = await useCases.setContainerSettings(ctx, actorOf(context), {
        brandId: req.brandId,
        companyPrefix: orNull(req.gs1CompanyPrefix),
        maxDepth: orNull(req.maxDepth),
      });
      return { ok: true, gs1CompanyPrefix: orUnset(s.companyPrefix), maxDepth: s.maxDepth };
    },
    async mintContainers(req, context) {
      const m = await useCases.mintContainers(ctx, actorOf(context), {
        brandId: req.brandId,
        level: req.level,
        count: req.count,
        extensionDigit: req.extensionDigit,
        idempotencyKey: req.idempotencyKey,
      });
      return { ok: true, mintId: m.mintId, level: m.level, ssccs: [...m.ssccs], replayed: m.replayed };
    },
    async packContainer(req, context) {
      return result(await useCases.packContainer(ctx, actorOf(context), itemsOf(req)));
    },
    async unpackContainer(req, context) {
      return result(await useCases.unpackContainer(ctx, actorOf(context), itemsOf(req)));
    },
    async getContainer(req, context) {
      const { container: c, contents } = await useCases.getContainer(
        ctx,
        req.brandId,
        req.sscc,
        { limit: orNull(req.limit), cursor: orNull(req.cursor) },
        principalOf(context).partnerId,
      );
      return {
        ok: true,
        container: {
          sscc: c.sscc,
          level: c.level,
          uri: c.uri,
          state: c.state,
          reason: c.reason === null ? 0 : decommissionReason.toWire(c.reason),
          parentSscc: orUnset(c.parentSscc),
          containerCount: c.containerCount,
          unitCount: c.unitCount,
          createdAt: toTimestamp(c.createdAt),
        },
        containers: contents.containers.map((x) => ({ sscc: x.sscc, level: x.level, uri: x.uri, state: x.state })),
        units: contents.units.map((u) => ({ serial: u.serial, uri: u.uri })),
        nextCursor: orUnset(contents.nextCursor),
      };
    },
  };
}
