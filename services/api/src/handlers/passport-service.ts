// PassportService handlers: a product's passport at the model, lot or unit level (drafts,
// immutable versions, a JSON import) and the credentials that read its restricted sections.

import type { ServiceImpl } from '@connectrpc/connect';
import { PassportService } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { dateOrNull, orNull, passportAccessClass } from '@mint/wire';

/** What the PassportService handlers need. */
export interface PassportServiceDeps extends HandlerDeps {
  /** The resolver's cached passports of this process, forgotten for a product on its publish. */
  readonly passportReads?: UseCases.PassportReads;
}

/** A level's key as the use cases take it. */
const keyOf = (req: { brandId: string; productId: string; lot?: string | undefined; serial?: string | undefined }): UseCases.PassportKeyInput => ({
  brandId: req.brandId,
  productId: req.productId,
  lot: orNull(req.lot),
  serial: orNull(req.serial),
});

/** The PassportService implementation. */
export function createPassportServiceHandlers(deps: PassportServiceDeps): ServiceImpl<typeof PassportService> {
  const { ctx, useCases, passportReads } = deps;
  return fromViews(PassportService, {
    async getPassport(req) {
      return { ...(await useCases.getPassport(ctx, keyOf(req))), ok: true };
    },

    async updatePassportDraft(req, context) {
      const draft = await useCases.updatePassportDraft(
        ctx,
        { id: principalOf(context).actorId },
        {
          ...keyOf(req),
          content: req.content,
          expectedRevision: orNull(req.expectedRevision),
        },
      );
      return { ok: true, draft };
    },

    async publishPassport(req, context) {
      const outcome = await useCases.publishPassport(
        ctx,
        { id: principalOf(context).actorId },
        { ...keyOf(req), expectedRevision: orNull(req.expectedRevision) },
      );
      passportReads?.invalidate(req.brandId, req.productId);
      return { ...outcome, ok: true };
    },

    async listPassportVersions(req) {
      const page = await useCases.listPassportVersions(ctx, { ...keyOf(req), limit: orNull(req.limit), before: orNull(req.before) });
      return { ...page, ok: true };
    },

    async getPassportVersion(req) {
      return { ok: true, version: await useCases.getPassportVersion(ctx, { ...keyOf(req), version: req.version }) };
    },

    async importPassports(req, context) {
      const outcome = await useCases.importPassports(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          publish: req.publish,
          entries: req.entries.map((e) => ({
            productId: e.productId === '' ? null : e.productId,
            gtin: e.gtin === '' ? null : e.gtin,
            lot: e.lot,
            serial: e.serial,
            content: e.content,
          })),
        },
      );
      return { ...outcome, ok: true };
    },

    async issuePassportAccessKey(req, context) {
      const issued = await useCases.issuePassportAccessKey(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          name: req.name,
          accessClass: passportAccessClass.toDomain(req.accessClass, 'access_class'),
          expiresAt: dateOrNull(req.expiresAt),
        },
      );
      return { ...issued, ok: true };
    },

    async revokePassportAccessKey(req, context) {
      const credential = await useCases.revokePassportAccessKey(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, id: req.credentialId });
      return { ok: true, credential };
    },

    async setPassportStyle(req, context) {
      const style = await useCases.setPassportStyle(
        ctx,
        { id: principalOf(context).actorId },
        {
          brandId: req.brandId,
          logoUrl: req.logoUrl === '' ? null : req.logoUrl,
          colour: req.colour === '' ? null : req.colour,
        },
      );
      return { ...style, ok: true };
    },

    async listPassportAccessKeys(req) {
      return { ok: true, credentials: await useCases.listPassportAccessKeysOf(ctx, req.brandId) };
    },
  });
}
