// ResolverService handlers: the public resolver's links (upsert, list, delete, replace a level, CSV import) and the brand's own resolver domain.

import type { ServiceImpl } from '@connectrpc/connect';
import { LinkLevel, ResolverService } from '@mint/contract';
import { gs1LinkTypeUri, type ReservedHosts } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { cursorOf, fromViews, pageOf } from './views.ts';
import { linkLevel, orNull } from '@mint/wire';

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
      const { link, created } = await useCases.upsertLink(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          gtin: orNull(req.gtin),
          lot: orNull(req.lot),
          serial: orNull(req.serial),
          linkType: req.linkType,
          href: req.href,
          title: req.title,
          hreflang: req.hreflang,
          mediaType: orNull(req.mediaType),
          context: req.context,
          fwqs: orNull(req.fwqs),
          isDefault: req.isDefault,
        },
      );
      return { ok: true, link: linkView(link), created };
    },

    async listLinks(req) {
      const page = await useCases.listLinks(ctx, req.brandId, {
        level: req.level === LinkLevel.UNSPECIFIED ? null : linkLevel.toDomain(req.level, 'level'),
        gtin: orNull(req.gtin),
        limit: orNull(req.limit),
        cursor: cursorOf(req.cursor),
      });
      return { ok: true, ...pageOf('links', { ...page, items: page.items.map(linkView) }) };
    },

    async deleteLink(req, context) {
      await useCases.deleteLink(ctx, { id: principalOf(context).actorId }, req.brandId, req.linkId);
      return { ok: true };
    },

    async replaceLinks(req, context) {
      const links = await useCases.replaceLinks(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          gtin: orNull(req.gtin),
          lot: orNull(req.lot),
          serial: orNull(req.serial),
          links: req.links.map((l) => ({
            linkType: l.linkType,
            href: l.href,
            title: l.title,
            hreflang: l.hreflang,
            mediaType: orNull(l.mediaType),
            context: l.context,
            fwqs: orNull(l.fwqs),
            isDefault: l.isDefault,
          })),
        },
      );
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
