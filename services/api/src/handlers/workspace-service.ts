// WorkspaceService handlers: a brand's API keys and members. Transport only: the use cases decide,
// the access rule (workspace:admin) was applied before these run.

import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { ApiKeySchema, BrandMemberSchema, WorkspaceService } from '@mint/contract';
import { decodeCursor, encodeCursor } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { orNull, toTimestamp } from './wire.ts';

/** The use cases WorkspaceService calls. */
export type WorkspaceUseCases = Pick<
  typeof UseCases,
  'createApiKeyOf' | 'listApiKeysOf' | 'revokeApiKeyOf' | 'listBrandMembersOf' | 'addBrandMember' | 'setBrandMemberRole' | 'removeBrandMember'
>;

/** What the WorkspaceService handlers need. */
export type WorkspaceServiceDeps = HandlerDeps<WorkspaceUseCases>;

const cursorOf = (cursor: string | undefined) => (cursor === undefined || cursor === '' ? null : decodeCursor(cursor, 'cursor'));

/** The WorkspaceService implementation. The key a CreateApiKey answers is in the response alone, never in a log line. */
export function createWorkspaceServiceHandlers(deps: WorkspaceServiceDeps): ServiceImpl<typeof WorkspaceService> {
  const { ctx, useCases } = deps;
  return {
    async createApiKey(req, context) {
      const { apiKey, key, apiAccessEnabled } = await useCases.createApiKeyOf(
        ctx,
        { id: principalOf(context).actorId },
        { brandId: req.brandId, name: req.name, scopes: req.scopes },
      );
      return { ok: true, apiKey: toWireKey(apiKey), key, apiAccessEnabled };
    },

    async listApiKeys(req) {
      const page = await useCases.listApiKeysOf(ctx, req.brandId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return {
        ok: true,
        apiKeys: page.items.map(toWireKey),
        hasMore: page.hasMore,
        nextCursor: page.next === null ? undefined : encodeCursor(page.next),
        apiAccessEnabled: page.apiAccessEnabled,
      };
    },

    async revokeApiKey(req, context) {
      return { ok: true, apiKey: toWireKey(await useCases.revokeApiKeyOf(ctx, { id: principalOf(context).actorId }, req.brandId, req.apiKeyId)) };
    },

    async listBrandMembers(req) {
      const page = await useCases.listBrandMembersOf(ctx, req.brandId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return { ok: true, members: page.items.map(toWireMember), hasMore: page.hasMore, nextCursor: page.next === null ? undefined : encodeCursor(page.next) };
    },

    async addBrandMember(req, context) {
      const { member, userCreated } = await useCases.addBrandMember(
        ctx,
        { id: principalOf(context).actorId },
        { brandId: req.brandId, userId: req.userId, email: req.email, name: req.name, role: req.role },
      );
      return { ok: true, member: toWireMember(member), userCreated };
    },

    async setBrandMemberRole(req, context) {
      return {
        ok: true,
        member: toWireMember(
          await useCases.setBrandMemberRole(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, userId: req.userId, role: req.role }),
        ),
      };
    },

    async removeBrandMember(req, context) {
      await useCases.removeBrandMember(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, userId: req.userId });
      return { ok: true };
    },
  };
}

function toWireKey(k: UseCases.ApiKeyView): MessageInitShape<typeof ApiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: [...k.scopes],
    createdAt: toTimestamp(k.createdAt),
    revokedAt: k.revokedAt === null ? undefined : toTimestamp(k.revokedAt),
    lastUsedAt: k.lastUsedAt === null ? undefined : toTimestamp(k.lastUsedAt),
  };
}

function toWireMember(m: UseCases.BrandMemberView): MessageInitShape<typeof BrandMemberSchema> {
  return { userId: m.userId, email: m.email, name: m.name, role: m.role, createdAt: toTimestamp(m.createdAt) };
}
