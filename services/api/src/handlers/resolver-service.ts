// ResolverService handlers: the public resolver's links (upsert, list, delete, replace a level, CSV import) and the brand's own resolver domain.

import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { LinkLevel, type ResolverService, type ResolverLinkSchema } from '@mint/contract';
import { decodeCursor, encodeCursor, gs1LinkTypeUri, type ReservedHosts } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { linkLevel, orNull, orUnset, toTimestamp, toWireImport } from './wire.ts';

/** The use cases ResolverService calls. */
export type ResolverUseCases = Pick<
  typeof UseCases,
  'upsertLink' | 'listLinks' | 'deleteLink' | 'replaceLinks' | 'startLinkImport' | 'getLinkImport' | 'setBrandResolverDomain'
>;

/** What the ResolverService handlers need. */
export interface ResolverServiceDeps extends HandlerDeps<ResolverUseCases> {
  /** Hosts no brand may claim as its resolver domain (`CONTROL_PLANE_HOSTS`, `BRAND_DOMAIN_DELEGATED_ZONES`); only the public host when absent. */
  readonly reservedHosts?: ReservedHosts;
}

/** The ResolverService implementation; link imports are stored by StartLinkImport and processed by the executor. */
export function createResolverServiceHandlers(deps: ResolverServiceDeps): ServiceImpl<typeof ResolverService> {
  const { ctx, useCases } = deps;
  return {
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
      return { ok: true, link: toWireLink(link), created };
    },

    async listLinks(req) {
      const cursor = req.cursor === undefined || req.cursor === '' ? null : decodeCursor(req.cursor, 'cursor');
      const page = await useCases.listLinks(ctx, req.brandId, {
        level: req.level === LinkLevel.UNSPECIFIED ? null : linkLevel.toDomain(req.level, 'level'),
        gtin: orNull(req.gtin),
        limit: orNull(req.limit),
        cursor,
      });
      return { ok: true, links: page.items.map(toWireLink), hasMore: page.hasMore, nextCursor: page.next === null ? undefined : encodeCursor(page.next) };
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
      return { ok: true, links: links.map(toWireLink) };
    },

    async startLinkImport(req, context) {
      return { ok: true, import: toWireImport(await useCases.startLinkImport(ctx, { id: principalOf(context).actorId }, req.brandId, req.csv)) };
    },

    async getLinkImport(req) {
      return { ok: true, import: toWireImport(await useCases.getLinkImport(ctx, req.brandId, req.importId)) };
    },

    async setBrandResolverDomain(req, context) {
      const view = await useCases.setBrandResolverDomain(
        ctx,
        { id: principalOf(context).actorId },
        { brandId: req.brandId, domain: req.domain },
        deps.reservedHosts,
      );
      return { ok: true, domain: orUnset(view.domain), resolverBaseUrl: view.resolverBaseUrl, changed: view.changed };
    },
  };
}

function toWireLink(link: UseCases.LinkView): MessageInitShape<typeof ResolverLinkSchema> {
  const { level, gtin, qualifier } = link.scope;
  return {
    id: link.id,
    brandId: link.brandId,
    level: linkLevel.toWire(level),
    gtin: gtin === '' ? undefined : gtin,
    lot: level === 'lot' ? qualifier : undefined,
    serial: level === 'serial' ? qualifier : undefined,
    linkType: gs1LinkTypeUri(link.linkType),
    href: link.href,
    title: link.title,
    hreflang: [...link.hreflang],
    mediaType: orUnset(link.mediaType),
    context: [...link.context],
    fwqs: link.fwqs,
    isDefault: link.isDefault,
    createdAt: toTimestamp(link.createdAt),
    updatedAt: toTimestamp(link.updatedAt),
  };
}
