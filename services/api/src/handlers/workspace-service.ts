// WorkspaceService handlers: a brand's API keys and members. Transport only: the use cases decide,
// the access rule (workspace:admin) was applied before these run.

import type { ServiceImpl } from '@connectrpc/connect';
import { WorkspaceService } from '@mint/contract';
import { principalOf, type HandlerDeps } from '../context.ts';
import { cursorOf, fromViews, pageOf } from './views.ts';
import { orNull } from '@mint/wire';

/** What the WorkspaceService handlers need. */
export type WorkspaceServiceDeps = HandlerDeps;

/** The WorkspaceService implementation. The key a CreateApiKey answers is in the response alone, never in a log line. */
export function createWorkspaceServiceHandlers(deps: WorkspaceServiceDeps): ServiceImpl<typeof WorkspaceService> {
  const { ctx, useCases } = deps;
  return fromViews(WorkspaceService, {
    async createApiKey(req, context) {
      const { apiKey, key, apiAccessEnabled } = await useCases.createApiKeyOf(
        ctx,
        { id: principalOf(context).actorId },
        { brandId: req.brandId, name: req.name, scopes: req.scopes },
      );
      return { ok: true, apiKey, key, apiAccessEnabled };
    },

    async listApiKeys(req) {
      const page = await useCases.listApiKeysOf(ctx, req.brandId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return { ok: true, ...pageOf('apiKeys', page), apiAccessEnabled: page.apiAccessEnabled };
    },

    async revokeApiKey(req, context) {
      return { ok: true, apiKey: await useCases.revokeApiKeyOf(ctx, { id: principalOf(context).actorId }, req.brandId, req.apiKeyId) };
    },

    async listBrandMembers(req) {
      const page = await useCases.listBrandMembersOf(ctx, req.brandId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return { ok: true, ...pageOf('members', page) };
    },

    async addBrandMember(req, context) {
      const { member, userCreated } = await useCases.addBrandMember(
        ctx,
        { id: principalOf(context).actorId },
        { brandId: req.brandId, userId: req.userId, email: req.email, name: req.name, role: req.role },
      );
      return { ok: true, member, userCreated };
    },

    async setBrandMemberRole(req, context) {
      const member = await useCases.setBrandMemberRole(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, userId: req.userId, role: req.role });
      return { ok: true, member };
    },

    async removeBrandMember(req, context) {
      await useCases.removeBrandMember(ctx, { id: principalOf(context).actorId }, { brandId: req.brandId, userId: req.userId });
      return { ok: true };
    },
  });
}
