// PassportService handlers: a product's passport at the model, lot or unit level (drafts,
// immutable versions, a JSON import) and the credentials that read its restricted sections.

import type { ServiceImpl } from '@connectrpc/connect';
import { PassportService } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the PassportService handlers need. */
export interface PassportServiceDeps extends HandlerDeps {
  /** The resolver's cached passports of this process, forgotten for a product on its publish. */
  readonly passportReads?: UseCases.PassportReads;
}

/** The PassportService implementation. */
export function createPassportServiceHandlers(deps: PassportServiceDeps): ServiceImpl<typeof PassportService> {
  const { ctx, useCases, passportReads } = deps;
  return fromViews(PassportService, {
    async getPassport(req) {
      return { ...(await useCases.getPassport(ctx, valuesOf(req))), ok: true };
    },

    async updatePassportDraft(req, context) {
      return { ok: true, draft: await useCases.updatePassportDraft(ctx, { id: principalOf(context).actorId }, valuesOf(req)) };
    },

    async publishPassport(req, context) {
      const outcome = await useCases.publishPassport(ctx, { id: principalOf(context).actorId }, valuesOf(req));
      passportReads?.invalidate(req.brandId, req.productId);
      return { ...outcome, ok: true };
    },

    async listPassportVersions(req) {
      return { ...(await useCases.listPassportVersions(ctx, valuesOf(req))), ok: true };
    },

    async getPassportVersion(req) {
      return { ok: true, version: await useCases.getPassportVersion(ctx, valuesOf(req)) };
    },

    async importPassports(req, context) {
      // An entry's empty product_id or gtin is unset: the use case names the level by the other.
      return { ...(await useCases.importPassports(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
    },

    async issuePassportAccessKey(req, context) {
      return { ...(await useCases.issuePassportAccessKey(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
    },

    async revokePassportAccessKey(req, context) {
      const credential = await useCases.revokePassportAccessKey(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, id: req.credentialId });
      return { ok: true, credential };
    },

    async setPassportStyle(req, context) {
      const style = { brandId: req.brandId, logoUrl: req.logoUrl || null, colour: req.colour || null };
      return { ...(await useCases.setPassportStyle(ctx, { id: principalOf(context).actorId }, style)), ok: true };
    },

    async listPassportAccessKeys(req) {
      return { ok: true, credentials: await useCases.listPassportAccessKeysOf(ctx, req.brandId) };
    },
  });
}
