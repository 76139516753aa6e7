// ResolverService handlers: the public resolver's links (upsert, list, delete, replace a level, CSV import) and the brand's own resolver domain.

import type { ServiceImpl } from '@connectrpc/connect';
import { ResolverService } from '@mint/contract';
import { gs1LinkTypeUri, type ReservedHosts } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews, pageOf, pageRequest } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the ResolverService handlers need. */
export interface ResolverServiceDeps extends HandlerDeps {
  /** Hosts no brand may claim as its resolver domain (`CONTROL_PLANE_HOSTS`, `BRAND_DOMAIN_DELEGATED_ZONES`); only the public host when absent. */
  readonly reservedHosts?: ReservedHosts;
}

/** The ResolverService implementation; link imports are stored by StartLinkImport and processed by the executor. */
export function createResolverServiceHandlers(deps: ResolverServiceDeps): ServiceImpl<typeof ResolverService> {
  const { ctx, useCases } = deps;
  return fromViews(ResolverService, {
    async upsertLink(req, context) {
      const { link, created } = await useCases.upsertLink(ctx, { id: principalOf(context).actorId }, valuesOf(req));
      return { ok: true, link: linkView(link), created };
    },

    async listLinks(req) {
      const v = valuesOf(req);
      const page = await useCases.listLinks(ctx, req.brandId, { ...v, ...pageRequest(v) });
      return { ok: true, links: page.items.map(linkView), ...pageOf(page) };
    },

    async deleteLink(req, context) {
      await useCases.deleteLink(ctx, { id: principalOf(context).actorId }, req.brandId, req.linkId);
      return { ok: true };
    },

    async replaceLinks(req, context) {
      const links = await useCases.replaceLinks(ctx, { id: principalOf(context).actorId }, valuesOf(req));
      return { ok: true, links: links.map(linkView) };
    },

    async startLinkImport(req, context) {
      return { ok: true, import: await useCases.startLinkImport(ctx, { id: principalOf(context).actorId }, req.brandId, req.csv) };
    },

    async getLinkImport(req) {
      return { ok: true, import: await useCases.getLinkImport(ctx, req.brandId, req.importId) };
    },

    async setBrandResolverDomain(req, context) {
      const view = await useCases.setBrandResolverDomain(
        ctx,
        { id: principalOf(context).actorId },
        { brandId: req.brandId, domain: req.domain },
        deps.reservedHosts,
      );
      return { ...view, ok: true };
    },
  });
}

/** A link as the wire shows it: its scope's level, GTIN and lot or serial, and its link type's URI. */
function linkView(link: UseCases.LinkView) {
  const { level, gtin, qualifier } = link.scope;
  return {
    ...link,
    level,
    gtin: gtin === '' ? null : gtin,
    lot: level === 'lot' ? qualifier : null,
    serial: level === 'serial' ? qualifier : null,
    linkType: gs1LinkTypeUri(link.linkType),
  };
}
