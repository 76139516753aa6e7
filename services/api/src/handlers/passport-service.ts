// PassportService handlers: a product's passport at the model, lot or unit level (drafts,
// immutable versions, a JSON import) and the credentials that read its restricted sections.

import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { PassportAccessKeySchema, PassportService, PassportVersionSchema } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { dateOrNull, orNull, orUnset, passportAccessClass, passportLevel, toTimestamp } from './wire.ts';

/** The use cases PassportService calls. */
export type PassportUseCases = Pick<
  typeof UseCases,
  | 'getPassport'
  | 'updatePassportDraft'
  | 'publishPassport'
  | 'listPassportVersions'
  | 'getPassportVersion'
  | 'importPassports'
  | 'issuePassportAccessKey'
  | 'revokePassportAccessKey'
  | 'listPassportAccessKeysOf'
  | 'setPassportStyle'
>;

/** What the PassportService handlers need. */
export interface PassportServiceDeps extends HandlerDeps<PassportUseCases> {
  /** The resolver's cached passports of this process, forgotten for a product on its publish. */
  readonly passportReads?: UseCases.PassportReads;
}

/** A version on the wire. */
const versionToWire = (v: UseCases.PassportVersionView): MessageInitShape<typeof PassportVersionSchema> => ({
  id: v.id,
  productId: v.productId,
  level: passportLevel.toWire(v.level),
  lot: v.lot,
  serial: v.serial,
  version: v.version,
  content: v.content as JsonObject,
  sha256: v.sha256,
  publishedBy: v.publishedBy,
  publishedAt: toTimestamp(v.publishedAt),
  predecessorId: orUnset(v.predecessorId),
});

/** A credential on the wire (never its key). */
const keyToWire = (k: UseCases.PassportAccessKeyView): MessageInitShape<typeof PassportAccessKeySchema> => ({
  id: k.id,
  name: k.name,
  accessClass: passportAccessClass.toWire(k.accessClass),
  expiresAt: toTimestamp(k.expiresAt),
  revokedAt: k.revokedAt === null ? undefined : toTimestamp(k.revokedAt),
  createdAt: toTimestamp(k.createdAt),
});

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
  return {
    async getPassport(req) {
      const view = await useCases.getPassport(ctx, keyOf(req));
      return {
        ok: true,
        level: passportLevel.toWire(view.level),
        draft:
          view.draft === null
            ? undefined
            : {
                content: view.draft.content as JsonObject,
                revision: view.draft.revision,
                updatedBy: view.draft.updatedBy,
                updatedAt: toTimestamp(view.draft.updatedAt),
              },
        latest: view.latest === null ? undefined : versionToWire(view.latest),
      };
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
      return {
        ok: true,
        draft: { content: draft.content as JsonObject, revision: draft.revision, updatedBy: draft.updatedBy, updatedAt: toTimestamp(draft.updatedAt) },
      };
    },

    async publishPassport(req, context) {
      const outcome = await useCases.publishPassport(
        ctx,
        { id: principalOf(context).actorId },
        { ...keyOf(req), expectedRevision: orNull(req.expectedRevision) },
      );
      passportReads?.invalidate(req.brandId, req.productId);
      return { ok: true, version: versionToWire(outcome.version), published: outcome.published };
    },

    async listPassportVersions(req) {
      const page = await useCases.listPassportVersions(ctx, { ...keyOf(req), limit: orNull(req.limit), before: orNull(req.before) });
      return { ok: true, versions: page.versions.map(versionToWire), nextBefore: orUnset(page.nextBefore) };
    },

    async getPassportVersion(req) {
      return { ok: true, version: versionToWire(await useCases.getPassportVersion(ctx, { ...keyOf(req), version: req.version })) };
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
      return { ok: true, drafts: outcome.drafts, published: outcome.published };
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
      return { ok: true, key: issued.key, credential: keyToWire(issued.credential) };
    },

    async revokePassportAccessKey(req, context) {
      return {
        ok: true,
        credential: keyToWire(
          await useCases.revokePassportAccessKey(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, id: req.credentialId }),
        ),
      };
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
      return { ok: true, logoUrl: style.logoUrl ?? '', colour: style.colour ?? '' };
    },

    async listPassportAccessKeys(req) {
      return { ok: true, credentials: (await useCases.listPassportAccessKeysOf(ctx, req.brandId)).map(keyToWire) };
    },
  };
}
